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
func dispatch(i, n int) {
	if i%10 < 7 {
		alpha(n)
	} else {
		beta(n)
	}
}

func inlA(x uint64, perMille int) uint64 {
	for i := 0; i < 70*perMille; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

func inlB(x uint64, perMille int) uint64 {
	for i := 0; i < 30*perMille; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func mixer(perMille int) {
	sink = inlB(inlA(sink, perMille), perMille)
}

// dither is a xorshift64 state: each round's length is scaled by 1 to 2 (the same factor
// for every call of the round) so that it cannot beat against the sampling timer's period.
var dither uint64 = 88172645463325252

func main() {
	secs := 20.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			secs = v
		}
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	for i := 0; time.Now().Before(end); i++ {
		dither ^= dither << 13
		dither ^= dither >> 7
		dither ^= dither << 17
		perMille := 1000 + int(dither%1000)
		for j := 0; j < 10; j++ {
			dispatch(j, 20*perMille)
		}
		mixer(perMille)
		_ = i
	}
}
