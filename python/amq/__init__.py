"""amq: compact set-membership structures, sharing files with the amq CLI and C++.

Every structure is a set-like class named as in C++ (BloomFilter, CuckooFilter,
SuccinctSet, ...). Keys are str (UTF-8), bytes-like or int (64-bit), hashed by amq
itself, so a set saved here answers the same in any process, in the CLI and in C++.

    >>> import amq
    >>> f = amq.BloomFilter(1000, 0.01)
    >>> f.add("apple")
    >>> "apple" in f
    True
    >>> g = amq.loads(bytes(f))
"""
from . import _amq
from ._amq import *  # noqa: F401,F403
from ._amq import AmqSet, Error, KeyIterator, kinds, load  # noqa: F401

__version__ = "0.1.0"


def loads(data, format="auto", **options):
    """Reads a set from its file's bytes: an amq container of any kind, or a Guava
    Bloom filter (format 'auto'); 'amq', 'guava', 'parquet' (a raw split-block
    bitset), 'bip158' (options siphash_key='32 hex digits', golomb_p, golomb_m) or
    'cache-digest' (base64url text) insist on one. Raises an amq.Error on any
    malformed input.

    A Python function (not the extension's) so that pickle can name it: sets pickle
    as ``amq.loads(bytes(set))``."""
    return _amq.loads(data, format, **options)
