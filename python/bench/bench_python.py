#!/usr/bin/env python3
"""Measures the amq Python binding (a benchmark, not a test):

1. contains_many on a NumPy uint64 array against the C++ AnySet::contains_many of the
   same filter on the same keys (the binding's overhead per key);
2. a loop of `key in f` over Python ints, against a Python set of the same keys
   (time and bytes per key);
3. SuccinctSet against Debian's python3-marisa (marisa-trie's own binding) on a word
   list: bytes, per-key time of `in` and of batch lookups.

    PYTHONPATH=build/release/python /usr/bin/python3 python/bench/bench_python.py [--keys N] [--words FILE]
"""
import argparse
import os
import sys
import time

import numpy as np

import amq
from amq import _amq


def best_of(fn, repeats=5):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def ns(seconds, n):
    return "%7.1f ns/key" % (seconds / n * 1e9)


def bench_filters(n):
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 2**64 - 1, size=n, dtype=np.uint64, endpoint=True)
    probes = np.concatenate([keys[: n // 2], rng.integers(0, 2**64 - 1, size=n - n // 2, dtype=np.uint64)])
    rng.shuffle(probes)
    print("1. contains_many on %d uint64 keys (half present), Python vs C++ on the same filter" % n)
    for cls in (amq.BlockedBloomFilter, amq.BloomFilter, amq.CuckooFilter, amq.BinaryFuseFilter,
                amq.RibbonFilter):
        if cls in (amq.BinaryFuseFilter, amq.RibbonFilter):
            f = cls(keys, fpp=0.01)
        else:
            f = cls(n, 0.01)
            f.add_many(keys)
        py = cxx = float("inf")
        for _ in range(7):  # alternated, so that both see the same load on the machine
            py = min(py, best_of(lambda: f.contains_many(probes), 1))
            cxx = min(cxx, _amq._cxx_contains_many_seconds(f, probes, 1))
        print("   %-20s Python %s   C++ %s   ratio %.2f" % (cls.__name__, ns(py, n), ns(cxx, n), py / cxx))

    print("2. `key in f` over Python ints, against a Python set of the same keys")
    m = min(n, 1_000_000)
    ints = [int(k) for k in keys[:m]]
    half = ints[: m // 2] + [int(k) for k in rng.integers(0, 2**63, size=m - m // 2, dtype=np.uint64)]
    f = amq.BlockedBloomFilter(m, 0.01)
    f.add_many(keys[:m])
    c = amq.CuckooFilter(m, 0.01)
    c.add_many(keys[:m])
    s = set(ints)
    set_bytes = sys.getsizeof(s) + sum(sys.getsizeof(k) for k in ints)

    def loop(container):
        hits = 0
        for k in half:
            if k in container:
                hits += 1
        return hits

    for name, container, nbytes in (("BlockedBloomFilter", f, f.nbytes), ("CuckooFilter", c, c.nbytes),
                                    ("Python set", s, set_bytes)):
        t = best_of(lambda: loop(container), 3)
        print("   %-20s %s   %6.1f bytes/key" % (name, ns(t, m), nbytes / m))


def bench_words(path):
    try:
        import marisa
    except ImportError:
        print("3. skipped: python3-marisa is not installed")
        return
    with open(path, encoding="utf-8", errors="replace") as fh:
        words = sorted({w for w in fh.read().split("\n") if w})
    n = len(words)
    print("3. SuccinctSet against marisa (python3-marisa) on %s: %d words" % (path, n))
    t0 = time.perf_counter()
    s = amq.SuccinctSet(words)
    t_amq = time.perf_counter() - t0
    ks = marisa.Keyset()
    for w in words:
        ks.push_back(w)
    t0 = time.perf_counter()
    trie = marisa.Trie()
    trie.build(ks)
    t_marisa = time.perf_counter() - t0
    agent = marisa.Agent()

    def marisa_in(w):
        agent.set_query(w)
        return trie.lookup(agent)

    shuffled = list(words)
    np.random.default_rng(2).shuffle(shuffled)
    t_in = best_of(lambda: [w in s for w in shuffled], 3)
    t_batch = best_of(lambda: s.contains_many(shuffled), 3)
    t_m_in = best_of(lambda: [marisa_in(w) for w in shuffled], 3)
    print("   %-12s %9d bytes (%5.2f bytes/word)  build %6.3f s  `in` %s  batch %s" %
          ("SuccinctSet", s.nbytes, s.nbytes / n, t_amq, ns(t_in, n), ns(t_batch, n)))
    print("   %-12s %9d bytes (%5.2f bytes/word)  build %6.3f s  `in` %s  batch %s (a loop: marisa has no "
          "batch call)" % ("marisa", trie.io_size(), trie.io_size() / n, t_marisa, ns(t_m_in, n), ns(t_m_in, n)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keys", type=int, default=1_000_000, help="random 64-bit keys (default 10^6)")
    ap.add_argument("--words", default="/usr/share/dict/american-english-insane",
                    help="word list for the SuccinctSet comparison")
    a = ap.parse_args()
    bench_filters(a.keys)
    if os.path.exists(a.words):
        bench_words(a.words)
    else:
        print("3. skipped: no word list at %s" % a.words)


if __name__ == "__main__":
    main()
