"""Tests of the amq Python package: set behaviour of every kind, keys, batch calls,
files shared with other processes and with the amq CLI, and errors."""
import os
import pickle
import random
import subprocess
import sys
import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import amq

DYNAMIC = [amq.BloomFilter, amq.BlockedBloomFilter, amq.ScalableBloomFilter, amq.CuckooFilter,
           amq.ScalableCuckooFilter, amq.ExpandableFilter]
STATIC = [amq.GolombCodedSet, amq.SuccinctSet, amq.BinaryFuseFilter, amq.RibbonFilter]
ERASING = [amq.CuckooFilter, amq.ScalableCuckooFilter, amq.ExpandableFilter]


def random_keys(n, seed):
    """n distinct keys of every type: str (some non-ASCII), bytes, ints (some negative)."""
    rng = random.Random(seed)
    keys = set()
    while len(keys) < n:
        r = rng.randrange(4)
        if r == 0:
            keys.add("k%d-é" % rng.getrandbits(48))
        elif r == 1:
            keys.add(rng.getrandbits(64).to_bytes(8, "little") + b"b")
        elif r == 2:
            keys.add(rng.getrandbits(64))
        else:
            keys.add(-rng.getrandbits(63) - 1)
    return list(keys)


def make(cls, keys, fpp=0.01):
    if cls in STATIC:
        return cls(keys, fpp=fpp) if cls is not amq.SuccinctSet else cls(keys)
    f = cls(max(1, len(keys)), fpp)
    f.update(keys)
    return f


@pytest.fixture(scope="module")
def cli():
    path = os.environ.get("AMQ_CLI")
    if not path:
        here = os.path.dirname(os.path.abspath(amq.__file__))
        path = os.path.join(here, "..", "..", "tools", "amq", "amq")
    if not os.access(path, os.X_OK):
        pytest.skip("the amq CLI is not built (AMQ_CLI unset)")
    return path


# ---- every kind: membership, rates, counts ------------------------------------------

@pytest.mark.parametrize("cls", DYNAMIC + STATIC, ids=lambda c: c.__name__)
def test_no_false_negatives_and_rate_within_bound(cls):
    keys = random_keys(5000, 1)
    f = make(cls, keys)
    assert all(k in f for k in keys)
    assert f.contains_many(keys).all()
    absent = [("absent-%d" % i) for i in range(20000)]
    rate = f.contains_many(absent).mean()
    bound = 0.0 if cls is amq.SuccinctSet else 0.01
    # 20000 trials: a rate of 2x the target is > 10 standard deviations away.
    assert rate <= 2 * bound + 1e-9, (cls.__name__, rate)
    assert f.fpp <= 2 * bound + 1e-9
    assert f.kind in amq.kinds()
    r = repr(f)
    assert cls.__name__ in r and f.kind in r and "fpp=" in r and "bytes=%d" % f.nbytes in r


@pytest.mark.parametrize("cls", [c for c in DYNAMIC + STATIC
                                  if c not in (amq.BloomFilter, amq.BlockedBloomFilter, amq.ScalableBloomFilter)],
                         ids=lambda c: c.__name__)
def test_len_counts_the_keys(cls):
    keys = random_keys(700, 2)
    assert len(make(cls, keys)) == 700


@pytest.mark.parametrize("cls", [amq.BloomFilter, amq.BlockedBloomFilter, amq.ScalableBloomFilter],
                         ids=lambda c: c.__name__)
def test_bloom_counts_are_estimates_not_len(cls):
    f = cls(1000, 0.01)
    f.update(range(500))
    with pytest.raises(TypeError):
        len(f)
    assert abs(f.info()["items"] - 500) < 25


def test_bloom_sizing_is_guavas():
    # Guava: m = -n ln p / (ln 2)^2 = 9585 bits for 1000 keys at 1%, rounded up to 64-bit
    # words; k = round(m/n ln 2) = 7.
    f = amq.BloomFilter(1000, 0.01)
    assert f.info()["params"]["bits"] == "9600"
    assert f.info()["params"]["hashes"] == "7"


@pytest.mark.parametrize("cls", ERASING, ids=lambda c: c.__name__)
def test_remove_and_discard(cls):
    f = cls(1000, 0.001)
    f.update(["a", "b", "c"])
    f.remove("a")
    assert "a" not in f and "b" in f and len(f) == 2
    assert f.discard("b") is True
    assert f.discard("zzz-never-added") is False
    with pytest.raises(KeyError):
        f.remove("zzz-never-added")
    assert len(f) == 1


def test_kinds_without_deletes_have_no_remove():
    assert not hasattr(amq.BloomFilter(10), "remove")
    assert not hasattr(amq.GolombCodedSet(["a"]), "discard")
    assert not hasattr(amq.GolombCodedSet(["a"]), "add")


def test_cuckoo_filter_full_raises_and_keeps_its_keys():
    f = amq.CuckooFilter(64, 0.01)
    added = []
    with pytest.raises(amq.FullError) as e:
        for i in range(100000):
            f.add(i)
            added.append(i)
    assert e.value.code == "full"
    assert all(k in f for k in added)
    assert len(f) == len(added)


@settings(max_examples=40, deadline=None, database=None)
@given(st.sets(st.one_of(st.text(max_size=20), st.binary(max_size=20),
                         st.integers(min_value=-2**63, max_value=2**64 - 1)), max_size=200),
       st.sampled_from(DYNAMIC + STATIC))
def test_property_no_false_negatives_against_a_python_set(keys, cls):
    keys = list(keys)
    # str and bytes with the same UTF-8 are one key to amq; a Python set has both.
    f = make(cls, keys)
    for k in keys:
        assert k in f
    if cls is amq.SuccinctSet:  # exact: no false positives either
        norm = {k.encode() if isinstance(k, str) else k for k in keys}
        assert len(f) == len({k if not isinstance(k, int) else ("int", k % 2**64) for k in norm})


# ---- keys ----------------------------------------------------------------------------

def test_key_types_hash_as_the_cli_does():
    f = amq.BloomFilter(100, 0.001)
    f.add(-1)
    assert 2**64 - 1 in f  # two's complement: the same 8 bytes
    assert (2**64 - 1).to_bytes(8, "little") in f  # an int is its 8 bytes little-endian
    f.add("é")
    assert "é".encode() in f and bytearray("é".encode()) in f and memoryview("é".encode()) in f
    f.add(np.int64(12345))
    assert 12345 in f and np.uint64(12345) in f and np.int32(12345) in f and np.uint16(12345) in f
    with pytest.raises(ValueError):
        f.add(2**64)
    with pytest.raises(ValueError):
        f.add(-2**63 - 1)
    with pytest.raises(TypeError):
        f.add(1.5)
    with pytest.raises(TypeError):
        f.add(True)
    with pytest.raises(TypeError):
        f.add(np.float64(1.5))  # exposes a buffer, but of a float
    import array
    with pytest.raises(TypeError):
        f.add(array.array("I", [1]))
    f.add(array.array("B", b"ab"))
    assert b"ab" in f


def test_a_saved_set_answers_the_same_in_another_process(tmp_path):
    keys = random_keys(2000, 3)
    path = tmp_path / "f.amq"
    absent = ["other-%d" % i for i in range(2000)]
    for cls in (amq.CuckooFilter, amq.BloomFilter, amq.GolombCodedSet):
        f = make(cls, keys)
        f.save(str(path))
        here = f.contains_many(absent + keys)
        code = ("import amq, sys, pickle; f = amq.load(sys.argv[1]); absent = pickle.loads(sys.stdin.buffer.read());"
                "sys.stdout.buffer.write(pickle.dumps([k in f for k in absent]))")
        env = dict(os.environ, PYTHONHASHSEED=str(random.randrange(1, 2**31)))
        out = subprocess.run([sys.executable, "-c", code, str(path)], input=pickle.dumps(absent + keys),
                             capture_output=True, env=env, check=True).stdout
        assert pickle.loads(out) == list(here)


# ---- batch calls -----------------------------------------------------------------------

def test_contains_many_on_arrays_matches_single_lookups():
    rng = np.random.default_rng(5)
    keys = rng.integers(0, 2**64 - 1, size=20000, dtype=np.uint64, endpoint=True)
    f = amq.CuckooFilter(20000, 0.01)
    f.add_many(keys[:10000])  # zero-copy read of the array
    out = f.contains_many(keys)
    assert out.dtype == np.bool_ and out.shape == (20000,)
    assert out[:10000].all()
    assert list(out[10000:10100]) == [int(k) in f for k in keys[10000:10100]]
    # int64 views of the same bytes, strided views, Python lists: the same answers.
    assert (f.contains_many(keys.view(np.int64)) == out).all()
    assert (f.contains_many(keys[::2]) == out[::2]).all()
    assert (f.contains_many(keys[::-3]) == out[::-3]).all()  # a negative stride
    assert (f.contains_many([int(k) for k in keys[:500]]) == out[:500]).all()
    assert (f.contains_many(keys.astype(np.int32)) == f.contains_many(keys.astype(np.int32).tolist())).all()
    assert f.contains_many([]).shape == (0,)


def test_batch_of_str_bytes_and_fixed_width_bytes():
    words = ["alpha", "beta", "gamma", "delta", "é"]
    f = amq.BlockedBloomFilter(100, 0.0001)
    f.add_many(words[:3])
    arr = np.array([w.encode() for w in words], dtype="S")  # padded to 5 bytes with NULs
    assert list(f.contains_many(arr)) == [True, True, True, False, False]
    assert list(f.contains_many(words)) == [True, True, True, False, False]
    assert list(f.contains_many(np.array(words))) == [True, True, True, False, False]  # dtype 'U'
    g = amq.GolombCodedSet(arr, fpp=0.0001)
    assert g.contains_many(words).all()
    with pytest.raises(TypeError):
        f.contains_many("alpha")
    with pytest.raises(TypeError):
        f.contains_many(np.zeros(3, dtype=np.float64))


def test_batch_calls_from_threads_stay_correct():
    f = amq.ScalableCuckooFilter(1000, 0.01)
    keys = np.arange(200000, dtype=np.uint64)
    errors = []

    def recording(fn):
        def run(*args):
            try:
                fn(*args)
            except Exception as e:  # an exception in a thread would otherwise be lost
                errors.append(e)
        return run

    def writer(lo):
        f.add_many(keys[lo:lo + 50000])

    before = np.arange(200000, 210000, dtype=np.uint64)
    f.add_many(before)

    def reader():  # keys added before stay found while other threads make the filter grow
        for _ in range(5):
            assert f.contains_many(before).all()
            f.contains_many(keys)

    threads = [threading.Thread(target=recording(writer), args=(i * 50000,)) for i in range(4)]
    threads += [threading.Thread(target=recording(reader)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert f.contains_many(keys).all() and len(f) == 210000


# ---- files ---------------------------------------------------------------------------

@pytest.mark.parametrize("cls", DYNAMIC + STATIC, ids=lambda c: c.__name__)
def test_round_trips(cls, tmp_path):
    keys = random_keys(300, 4)
    f = make(cls, keys)
    data = bytes(f)
    f.save(tmp_path / "p")  # a pathlib.Path
    for g in (amq.loads(data), pickle.loads(pickle.dumps(f)), amq.load(_save(f, tmp_path / "x")),
              amq.load(tmp_path / "p"), amq.load(os.fsencode(tmp_path / "p"))):
        assert type(g) is cls
        assert bytes(g) == data
        assert g.contains_many(keys).all()


def _save(f, path):
    f.save(str(path))
    return str(path)


@pytest.mark.parametrize("cls", DYNAMIC + STATIC, ids=lambda c: c.__name__)
def test_corrupted_files_raise(cls, tmp_path):
    data = bytes(make(cls, random_keys(50, 6)))
    for n in range(0, len(data), max(1, len(data) // 97)):
        with pytest.raises(amq.Error):
            amq.loads(data[:n])
    rng = random.Random(7)
    for _ in range(100):
        b = bytearray(data)
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        with pytest.raises(amq.Error) as e:
            amq.loads(bytes(b))
        assert e.value.code in ("checksum_mismatch", "bad_magic", "unsupported_version", "corrupt", "truncated",
                                "too_large")
    p = tmp_path / "bad"
    p.write_bytes(data[:-1])
    with pytest.raises(amq.TruncatedError):
        amq.load(str(p))
    with pytest.raises(amq.NotFoundError):
        amq.load(str(tmp_path / "missing"))
    with pytest.raises(ValueError):
        amq.load(str(p) + "\0x")


def test_guava_format(tmp_path, cli):
    f = amq.BloomFilter(1000, 0.01, format="guava")
    f.update(["x", "y"])
    data = bytes(f)
    assert data[0] == 1 and data[1] == 7  # Guava's writeTo: strategy ordinal 1, 7 hashes
    g = amq.loads(data)
    assert g.info()["format"] == "guava" and "x" in g
    path = _save(f, tmp_path / "g.bin")
    out = subprocess.run([cli, "query", path, "x", "y", "nope"], capture_output=True, text=True).stdout
    assert out.split() == ["x", "y"]


def test_union_of_bloom_filters():
    a, b = amq.BloomFilter(1000, 0.01), amq.BloomFilter(1000, 0.01)
    a.update(range(100))
    b.update(range(100, 200))
    u = a | b
    assert u.contains_many(np.arange(200, dtype=np.int64)).all()
    assert a.union(b).info() == u.info()
    assert 150 not in a
    a |= b
    assert 150 in a
    x, y = amq.BlockedBloomFilter(1000), amq.BlockedBloomFilter(1000)
    x.add("p")
    y.add("q")
    assert "p" in (x | y) and "q" in (x | y)
    with pytest.raises(amq.IncompatibleError):
        a | amq.BloomFilter(5000, 0.01)


def test_union_of_blocked_bloom_files_hashed_with_xxh3():
    # Written by amq before the blocked filter's u64 keys got their own hash (Mix64Hasher):
    # keys i * 1000003 for i < 300, seed 7. Such files still merge, with their own hash.
    path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data",
                        "blocked_bloom_xxh3_u64_seed7_300.amq")
    old = amq.load(path)
    assert old.info()["params"]["hash"] == "xxh3 seed 7"
    u = old | amq.load(path)
    assert all(i * 1000003 in u for i in range(300))
    assert u.info()["params"]["hash"] == "xxh3 seed 7"
    with pytest.raises(amq.Error):
        old | amq.BlockedBloomFilter(300, 0.01, seed=7)


# ---- the CLI reads Python's files and the other way round -------------------------------

@pytest.mark.parametrize("cls", DYNAMIC + STATIC, ids=lambda c: c.__name__)
def test_cli_reads_python_files(cls, tmp_path, cli):
    words = ["w%d" % i for i in range(300)]
    f = make(cls, words)
    path = _save(f, tmp_path / "s.amq")
    absent = ["n%d" % i for i in range(300)]
    out = subprocess.run([cli, "query", path], input="\n".join(words + absent) + "\n",
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == [k for k in words + absent if k in f]


def test_cli_reads_python_int_keys(tmp_path, cli):
    ints = [-5, 0, 7, 2**63, 2**64 - 1]
    f = amq.CuckooFilter(100, 0.0001, key_type="u64")
    f.update(ints)
    path = _save(f, tmp_path / "u.amq")
    out = subprocess.run([cli, "query", path, "-5", "7", "18446744073709551615", "8", "-4"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["-5", "7", "18446744073709551615"]
    s = amq.SuccinctSet(ints)  # key type u64 inferred
    path = _save(s, tmp_path / "s.amq")
    out = subprocess.run([cli, "query", path, "-5", "0", "9"], capture_output=True, text=True).stdout.split()
    assert out == ["-5", "0"]


@pytest.mark.parametrize("kind", ["bloom", "cuckoo", "gcs", "succinct", "binary-fuse", "ribbon", "expandable"])
def test_python_reads_cli_files(kind, tmp_path, cli):
    words = ["w%d" % i for i in range(300)] + ["é"]
    keys = tmp_path / "keys.txt"
    keys.write_text("\n".join(words) + "\n")
    out = tmp_path / "s.amq"
    subprocess.run([cli, "build", "-t", kind, "-o", str(out), str(keys)], check=True)
    s = amq.load(str(out))
    assert s.kind == kind and s.contains_many(words).all()
    absent = ["n%d" % i for i in range(300)]
    cli_says = subprocess.run([cli, "query", str(out)] + absent, capture_output=True, text=True).stdout.split()
    assert cli_says == [k for k in absent if k in s]
    ints = tmp_path / "ints.txt"
    ints.write_text("-1\n3\n18446744073709551614\n")
    subprocess.run([cli, "build", "-t", kind, "--key-type", "u64", "-o", str(out), str(ints)], check=True)
    s = amq.load(str(out))
    assert s.key_type == "u64" and all(k in s for k in (-1, 3, 2**64 - 2))


# ---- SuccinctSet's ordered interface ---------------------------------------------------

def test_succinct_set_ordered_queries(tmp_path):
    words = sorted({"apple", "apricot", "banana", "band", "bandana", "cherry", "é", ""} |
                   {"k%04d" % i for i in range(500)})
    s = amq.SuccinctSet(reversed(words))
    assert list(s) == words and len(s) == len(words)
    for i, w in enumerate(words):
        assert s.index_of(w) == i and s.key_at(i) == w
    assert s.index_of("nope") is None and s.key_at(-1) == words[-1]
    with pytest.raises(IndexError):
        s.key_at(len(words))
    assert list(s.keys(prefix="ban")) == ["banana", "band", "bandana"]
    assert list(s.range("b", "c")) == ["banana", "band", "bandana"]
    assert list(s.range("k0498", None)) == ["k0498", "k0499", "é"]
    path = _save(s, tmp_path / "t.amq")
    m = amq.SuccinctSet.open(tmp_path / "t.amq")
    assert list(m) == words and m.index_of("cherry") == words.index("cherry") and "band" in m
    assert m.is_mapped and amq.load(path).is_mapped and not s.is_mapped
    with pytest.raises(amq.WrongKindError):
        amq.SuccinctSet.open(_save(amq.BloomFilter(10), tmp_path / "b.amq"))
    n = amq.SuccinctSet([2**40, 3, 1, 256])
    assert list(n) == [1, 3, 256, 2**40] and list(n.range(2, 300)) == [3, 256] and n.index_of(256) == 2


def test_errors_carry_codes():
    with pytest.raises(amq.InvalidArgumentError) as e:
        amq.BloomFilter(10, 1.5)
    assert isinstance(e.value, ValueError) and isinstance(e.value, amq.Error) and e.value.code == "invalid_argument"
    with pytest.raises(amq.BadMagicError):
        amq.loads(b"not a set at all, nothing like one")
    with pytest.raises(amq.InvalidArgumentError):
        amq.CuckooFilter(10, 0.01, no_such_option=3)
    f = amq.CuckooFilter(10, 0.01, fingerprint_bits=16)
    assert f.info()["params"]["fingerprint_bits"] == "16"


# ---- LogStore ------------------------------------------------------------------------

def test_log_store_is_a_mapping_that_persists(tmp_path):
    d = str(tmp_path / "db")
    with amq.LogStore(tmp_path / "db", durability="every_write") as db:
        db[b"k"] = b"v"
        db["text"] = "é"
        db[7] = bytearray(b"seven")
        db.put(b"gone", b"x")
        del db[b"gone"]
        assert db[b"k"] == b"v" and db.get("text") == "é".encode() and db[7] == b"seven"
        assert db.get(b"gone") is None and db.get(b"gone", b"d") == b"d" and b"gone" not in db
        with pytest.raises(KeyError):
            db[b"gone"]
        with pytest.raises(KeyError):
            del db[b"gone"]
        assert len(db) == 3 and "keys=3" in repr(db)
    assert db.closed and "closed" in repr(db)
    with pytest.raises(ValueError):
        db[b"k"]
    with amq.LogStore(d, read_only=True) as db:
        assert dict(db.items()) == {b"k": b"v", b"text": "é".encode(), (7).to_bytes(8, "little"): b"seven"}
        assert sorted(db) == sorted(db.keys()) and len(db.values()) == 3
        with pytest.raises(amq.Error):
            db[b"new"] = b"x"


def test_log_store_one_writer_and_bad_options(tmp_path):
    d = str(tmp_path / "db")
    with amq.LogStore(d, durability="group_commit", group_commit_ms=5) as db:
        db[b"a"] = b"1"
        with pytest.raises(amq.LockedError):
            amq.LogStore(d)
    with pytest.raises(amq.InvalidArgumentError):
        amq.LogStore(d, durability="sometimes")
    with pytest.raises(amq.NotFoundError):
        amq.LogStore(str(tmp_path / "missing"), create=False)
    with pytest.raises(TypeError):
        with amq.LogStore(d) as db:
            db[b"a"] = 5


def test_log_store_written_by_python_is_read_by_the_cli(tmp_path, cli):
    d = str(tmp_path / "db")
    with amq.LogStore(d) as db:
        db[b"apple"] = b"red"
    out = subprocess.run([cli, "store", "get", d, "apple"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "red", out


# ---- RedisBloomFilter ------------------------------------------------------------------

@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    import shutil
    import socket
    import time
    server = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not os.access(server, os.X_OK):
        pytest.skip("redis-server is not installed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    d = str(tmp_path_factory.mktemp("redis"))
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--dir", d, "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(500):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.01)
        else:
            pytest.fail("redis-server did not start")
        yield "redis://127.0.0.1:%d" % port
    finally:
        proc.terminate()
        proc.wait()


def test_redis_bloom_filter(redis_url):
    f = amq.RedisBloomFilter(redis_url, "py-users", capacity=1000, fpp=0.01)
    keys = random_keys(3000, 9)  # past the first layer's capacity: a second layer opens
    assert f.add_many(keys) >= 2950
    assert f.add(keys[0]) is False
    assert f.contains_many(keys).all() and keys[1] in f
    absent = ["absent-%d" % i for i in range(5000)]
    assert f.contains_many(absent).mean() <= 0.02
    info = f.info()
    assert info["layers"] >= 2 and info["items"] >= 2950
    g = amq.RedisBloomFilter(redis_url, "py-users", create=False)  # a second client sees the keys
    assert g.contains_many(np.array([k % 2**64 for k in keys if isinstance(k, int)], dtype=np.uint64)).all()
    with pytest.raises(amq.IncompatibleError):
        amq.RedisBloomFilter(redis_url, "py-users", capacity=5, fpp=0.01)
    local = amq.ScalableBloomFilter(100, 0.01)
    local.update(["p", "q"])
    amq.RedisBloomFilter.push(redis_url, "py-pushed", local)
    assert bytes(amq.RedisBloomFilter.pull(redis_url, "py-pushed")) == bytes(local)
    assert "p" in amq.RedisBloomFilter(redis_url, "py-pushed", create=False)
    assert g.destroy() is True
    with pytest.raises(amq.NotFoundError):
        amq.RedisBloomFilter(redis_url, "py-users", create=False)
    with pytest.raises(amq.IoError):
        amq.RedisBloomFilter("redis://127.0.0.1:1", "x", connect_timeout=0.5)


# ---- outside formats -------------------------------------------------------------------

def test_parquet_and_bip158_formats(tmp_path, cli):
    b = amq.BlockedBloomFilter(1000, 0.01, format="parquet")
    b.update(["a", "b"])
    r = amq.loads(bytes(b), format="parquet")
    assert r.info()["format"] == "parquet" and "a" in r and bytes(r) == bytes(b)
    path = _save(b, tmp_path / "p.bin")
    out = subprocess.run([cli, "query", "--format", "parquet", path, "a", "b", "c"], capture_output=True, text=True)
    assert out.stdout.split() == ["a", "b"]
    assert "parquet" in amq.BlockedBloomFilter(10, parquet=True).info()["params"]["hash"]
    assert "parquet" not in amq.BlockedBloomFilter(10, parquet=False).info()["params"]["hash"]
    key = "00112233445566778899aabbccddeeff"
    g = amq.GolombCodedSet(["x", "y"], format="bip158", siphash_key=key)
    h = amq.loads(bytes(g), format="bip158", siphash_key=key)
    assert "x" in h and "y" in h and bytes(h) == bytes(g)
    path = _save(g, tmp_path / "g.bip158")
    out = subprocess.run([cli, "query", "--format", "bip158", "--siphash-key", key, path, "x", "q"],
                         capture_output=True, text=True)
    assert out.stdout.split() == ["x"]
    with pytest.raises(amq.InvalidArgumentError):
        amq.loads(bytes(g), format="amq", siphash_key=key)


# ---- documentation -----------------------------------------------------------------------

def test_every_public_name_has_a_docstring_and_a_stub():
    import ast
    stub = ast.parse(open(os.path.join(os.path.dirname(amq.__file__), "__init__.pyi")).read())
    stubbed = {n.name for n in stub.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    stub_methods = {c.name: {f.name for f in c.body if isinstance(f, ast.FunctionDef)}
                    for c in stub.body if isinstance(c, ast.ClassDef)}
    for name in dir(amq):
        obj = getattr(amq, name)
        if name.startswith("_") or not (isinstance(obj, type) or callable(obj)):
            continue
        assert name in stubbed, name
        assert obj.__doc__, name
        if isinstance(obj, type) and not issubclass(obj, BaseException):
            for attr, member in vars(obj).items():
                if attr.startswith("_") or not callable(member):
                    continue
                assert member.__doc__, (name, attr)
                inherited = set().union(*(stub_methods.get(b, set()) for b in
                                          ("AmqSet", "_DynamicSet", "_ErasingSet", "_StaticSet")))
                assert attr in stub_methods.get(name, set()) | inherited, (name, attr)


def test_the_readme_example_runs_as_written(tmp_path):
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")
    text = open(readme, encoding="utf-8").read()
    section = text[text.index("## Using it from Python"):]
    code = section[section.index("```python\n") + len("```python\n"):]
    code = code[:code.index("```")]
    code = code.replace("/tmp/fruit", str(tmp_path / "fruit"))
    exec(compile(code, "README.md", "exec"), {})


def test_save_while_another_thread_adds_does_not_deadlock(tmp_path):
    # A writer thread saving (GIL released, set locked) while the main thread adds
    # (GIL held, waiting for the lock): the save must not wait for the GIL holding the lock.
    code = """
import sys, threading, amq
f = amq.ScalableCuckooFilter(1000, 0.01)
f.update(range(20000))
stop = False
def saver():
    while not stop:
        f.save(sys.argv[1])
t = threading.Thread(target=saver)
t.start()
for i in range(50000):
    f.add(i)
    f.contains_many([i, i + 1])
stop = True
t.join()
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s.amq")], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == "ok", out.stderr


# ---- the typed C++ classes read Python's files and the other way round ---------------------

@pytest.fixture(scope="module")
def cxx_peer():
    path = os.environ.get("AMQ_PY_CXX_PEER")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("the C++ peer is not built (AMQ_PY_CXX_PEER unset)")
    return path


def _peer_arg(k):
    return "u:%d" % k if isinstance(k, int) else k


@pytest.mark.parametrize("cls,kind", [(amq.BloomFilter, "bloom"), (amq.CuckooFilter, "cuckoo")])
def test_cxx_reads_python_files_and_python_reads_cxx_files(cls, kind, tmp_path, cxx_peer):
    present = ["apple", "é", 0, -1, 2**63, 12345]
    absent = ["pear", "e", 1, -2, 2**63 + 1, 54321]
    f = cls(1000, 0.001)
    f.update(present)
    path = _save(f, tmp_path / "py.amq")
    out = subprocess.run([cxx_peer, "query", kind, path] + [_peer_arg(k) for k in present + absent],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["1" if k in f else "0" for k in present + absent]
    assert out[:len(present)] == ["1"] * len(present)
    cpath = str(tmp_path / "cxx.amq")
    subprocess.run([cxx_peer, "build", kind, cpath] + [_peer_arg(k) for k in present], check=True)
    g = amq.load(cpath)
    assert type(g) is cls and all(k in g for k in present)
    assert bytes(g) == bytes(f)  # the same keys, the same sizing: the same file


def test_cxx_reads_a_python_succinct_set(tmp_path, cxx_peer):
    words = ["band", "banana", "apple", "é"]
    path = _save(amq.SuccinctSet(words), tmp_path / "s.amq")
    out = subprocess.run([cxx_peer, "query", "succinct", path, "band", "ban", "é", "bananas"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["1", "0", "1", "0"]
