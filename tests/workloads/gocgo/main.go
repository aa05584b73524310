// Known-answer cgo workload, built stripped: main.main -> main.callC -> (cgo) cspin ->
// cspin_leaf, a C loop. The C frames run on the thread's g0 stack, the Go frames that
// called them on the goroutine's: a sample in cspin_leaf must show both, C above Go.
//
//	gocgo [SECONDS]   spin for SECONDS (default 20)
package main

/*
#include <stdint.h>

__attribute__((noinline)) static uint64_t cspin_leaf(uint64_t x, int n)
{
	for (int i = 0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

__attribute__((noinline)) static uint64_t cspin(uint64_t x, int n)
{
	return cspin_leaf(x, n) + 1;
}
*/
import "C"

import (
	"os"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func callC() {
	sink = uint64(C.cspin(C.uint64_t(sink), 2000000))
}

func main() {
	secs := 20.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			secs = v
		}
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	for time.Now().Before(end) {
		callC()
	}
}
