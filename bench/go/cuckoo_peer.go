// cuckoo_peer: the Go cuckoo filter of seed 001 (github.com/seiflotfy/cuckoofilter,
// Debian's golang-github-seiflotfy-cuckoofilter-dev) timed on the keys `amq bench`
// uses. Built by the bench in GOPATH mode (GO111MODULE=off), offline.
//
// Usage: cuckoo_peer KEYS ABSENT REPEATS SAMPLE [PROBE] (builds: the median of REPEATS
// runs; lookups: the first SAMPLE keys of ABSENT and of PROBE — the present keys to
// look up, by default KEYS — timed as amq bench times its own rows)
// Each file is a sequence of keys, each a 4-byte little-endian length and the bytes.
// Prints one line of key=value pairs that bench/table/cuckoo.cpp parses:
//   n=... inserted=... buckets=... bytes=... build_ns=... pos_ns=... neg_ns=... fp=... absent=...
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"sort"
	"syscall"
	"time"
	"unsafe"

	cuckoo "github.com/seiflotfy/cuckoofilter"
)

func readKeys(path string) [][]byte {
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var keys [][]byte
	for len(data) >= 4 {
		n := int(binary.LittleEndian.Uint32(data))
		data = data[4:]
		if n > len(data) {
			fmt.Fprintln(os.Stderr, "truncated key file")
			os.Exit(2)
		}
		keys = append(keys, data[:n])
		data = data[n:]
	}
	return keys
}

// CPU time of the calling OS thread (main locks itself to one), in ns.
func threadCPUNanos() int64 {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3 // CLOCK_THREAD_CPUTIME_ID
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return time.Now().UnixNano()
	}
	return ts.Nano()
}

func median(xs []float64) float64 {
	sort.Float64s(xs)
	return xs[len(xs)/2]
}

func least(xs []float64) float64 {
	sort.Float64s(xs)
	return xs[0]
}

func main() {
	runtime.LockOSThread()
	if len(os.Args) != 5 && len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: cuckoo_peer KEYS ABSENT REPEATS SAMPLE [PROBE]")
		os.Exit(2)
	}
	keys := readKeys(os.Args[1])
	absent := readKeys(os.Args[2])
	var repeats int
	fmt.Sscan(os.Args[3], &repeats)
	if repeats < 1 {
		repeats = 1
	}
	var sample int
	fmt.Sscan(os.Args[4], &sample)
	if sample < 1 {
		sample = 1
	}
	probeKeys, probeAbsent := keys, absent
	if len(os.Args) == 6 {
		probeKeys = readKeys(os.Args[5])
	}
	if len(probeKeys) > sample {
		probeKeys = probeKeys[:sample]
	}
	if len(probeAbsent) > sample {
		probeAbsent = probeAbsent[:sample]
	}
	n := len(keys)
	var f *cuckoo.Filter
	inserted := 0
	var builds, pos, neg []float64
	for r := 0; r < repeats; r++ {
		start := time.Now()
		f = cuckoo.NewFilter(uint(n))
		inserted = 0
		for _, k := range keys {
			if f.Insert(k) {
				inserted++
			}
		}
		builds = append(builds, float64(time.Since(start).Nanoseconds())/float64(n))
	}
	// Lookups are timed as amq bench times its own rows (best_cpu_ns): in this
	// thread's CPU time, one untimed warm-up pass, then the least of at least 11 passes.
	sink := 0
	lookup := func(ks [][]byte) float64 {
		start := threadCPUNanos()
		for _, k := range ks {
			if f.Lookup(k) {
				sink++
			}
		}
		return float64(threadCPUNanos()-start) / float64(len(ks))
	}
	lookupRepeats := repeats
	if lookupRepeats < 11 {
		lookupRepeats = 11
	}
	lookup(probeKeys)
	lookup(probeAbsent)
	for r := 0; r < lookupRepeats; r++ {
		pos = append(pos, lookup(probeKeys))
		neg = append(neg, lookup(probeAbsent))
	}
	fp := 0
	for _, k := range absent {
		if f.Lookup(k) {
			fp++
		}
	}
	buckets := len(f.Encode()) / 4
	fmt.Printf("n=%d inserted=%d buckets=%d bytes=%d build_ns=%.3f pos_ns=%.3f neg_ns=%.3f fp=%d absent=%d sink=%d\n",
		n, inserted, buckets, buckets*4, median(builds), least(pos), least(neg), fp, len(absent), sink)
}
