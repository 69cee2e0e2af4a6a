// cuckoo_peer: the Go cuckoo filter of seed 001 (github.com/seiflotfy/cuckoofilter,
// Debian's golang-github-seiflotfy-cuckoofilter-dev) timed on the keys `amq bench`
// uses. Built by the bench in GOPATH mode (GO111MODULE=off), offline.
//
// Usage: cuckoo_peer KEYS ABSENT REPEATS (timings are the median of REPEATS runs)
// Each file is a sequence of keys, each a 4-byte little-endian length and the bytes.
// Prints one line of key=value pairs that bench/table/cuckoo.cpp parses:
//   n=... inserted=... buckets=... bytes=... build_ns=... pos_ns=... neg_ns=... fp=... absent=...
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"sort"
	"time"

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

func median(xs []float64) float64 {
	sort.Float64s(xs)
	return xs[len(xs)/2]
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: cuckoo_peer KEYS ABSENT REPEATS")
		os.Exit(2)
	}
	keys := readKeys(os.Args[1])
	absent := readKeys(os.Args[2])
	var repeats int
	fmt.Sscan(os.Args[3], &repeats)
	if repeats < 1 {
		repeats = 1
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
	sink := 0
	for r := 0; r < repeats; r++ {
		start := time.Now()
		for _, k := range keys {
			if f.Lookup(k) {
				sink++
			}
		}
		pos = append(pos, float64(time.Since(start).Nanoseconds())/float64(n))
		start = time.Now()
		for _, k := range absent {
			if f.Lookup(k) {
				sink++
			}
		}
		neg = append(neg, float64(time.Since(start).Nanoseconds())/float64(len(absent)))
	}
	fp := 0
	for _, k := range absent {
		if f.Lookup(k) {
			fp++
		}
	}
	buckets := len(f.Encode()) / 4
	fmt.Printf("n=%d inserted=%d buckets=%d bytes=%d build_ns=%.3f pos_ns=%.3f neg_ns=%.3f fp=%d absent=%d sink=%d\n",
		n, inserted, buckets, buckets*4, median(builds), median(pos), median(neg), fp, len(absent), sink)
}
