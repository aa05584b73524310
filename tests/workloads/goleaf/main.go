// Known-answer Go workload for exact stacks, built stripped (-ldflags='-s -w'):
//
//	main.main -> main.dispatch -> main.alpha (7 of 10 calls) -> main.churn
//	                            -> main.beta  (3 of 10 calls) -> main.churn
//	main.main -> main.mixer, which calls main.inlA and main.inlB, both inlined (7:3 work)
//
// churn is a //go:noinline leaf with no frame of its own (no locals, no calls): a
// frame-pointer walk from inside it reads dispatch's return address where alpha's or
// beta's should be; only the pcsp table says where churn's return address is.
//
//	goleaf [SECONDS]   spin for SECONDS (default 20)
package main

import (
	"os"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func churn(x uint64, n int) uint64 {
	for i := 0; i < n; i++ {
		x = x*2862933555777941757 + 3037000493
	}
	return x
}

//go:noinline
func alpha(n int) {
	sink = churn(sink, n)
}

//go:noinline
func beta(n int) {
	sink = churn(sink, n)
}

//go:noinline
func dispatch(i int) {
	if i%10 < 7 {
		alpha(20000)
	} else {
		beta(20000)
	}
}

func inlA(x uint64) uint64 {
	for i := 0; i < 70000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

func inlB(x uint64) uint64 {
	for i := 0; i < 30000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func mixer() {
	sink = inlB(inlA(sink))
}

func main() {
	secs := 20.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			secs = v
		}
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	for i := 0; time.Now().Before(end); i++ {
		for j := 0; j < 10; j++ {
			dispatch(j)
		}
		mixer()
		_ = i
	}
}
