// gospans is a Go service traced with OpenTelemetry and profiled by Grafana's Pyroscope
// Go SDK, linked by github.com/grafana/otel-profiling-go (all from the Go module proxy at
// test time): the CPU samples taken inside a root span carry its span_id as a pprof label.
// For tests/e2e/server_pyroscope_gospans.sh.
//
//	gospans URL APP CPU_SECONDS
//
// Root spans "alpha" and "beta" run in turn, doing 7:3 of the same CPU work in main.alpha
// and main.beta, until the process has had CPU_SECONDS of CPU (however loaded the
// machine is) or a minute has passed. At the end it prints one line per span name: the name and its span ids,
// comma-separated.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	otelpyroscope "github.com/grafana/otel-profiling-go"
	"github.com/grafana/pyroscope-go"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// spin does n units of work: CPU time, not wall time, so the 7:3 holds however busy the
// machine is.
//
//go:noinline
func spin(n int) {
	x := uint64(1)
	for i := 0; i < n*1000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	if x == 42 {
		fmt.Println(x)
	}
}

//go:noinline
func alpha() { spin(700) }

//go:noinline
func beta() { spin(300) }

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: gospans URL APP CPU_SECONDS")
		os.Exit(2)
	}
	secs, _ := strconv.Atoi(os.Args[3])
	p, err := pyroscope.Start(pyroscope.Config{
		ApplicationName: os.Args[2],
		ServerAddress:   os.Args[1],
		UploadRate:      2 * time.Second,
		ProfileTypes:    []pyroscope.ProfileType{pyroscope.ProfileCPU},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "pyroscope:", err)
		os.Exit(1)
	}
	tp := otelpyroscope.NewTracerProvider(sdktrace.NewTracerProvider())
	tracer := tp.Tracer("kiln-e2e")
	ids := map[string][]string{}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	want, stop := time.Duration(secs)*time.Second, time.Now().Add(time.Minute)
	for time.Now().Before(stop) && cpu() < want {
		for _, s := range []struct {
			name string
			fn   func()
		}{{"alpha", alpha}, {"beta", beta}} {
			ctx, span := tracer.Start(context.Background(), s.name)
			ids[s.name] = append(ids[s.name], span.SpanContext().SpanID().String())
			// Start set the goroutine's pprof labels (span_id, span_name) until End
			_ = ctx
			s.fn()
			span.End()
		}
	}
	p.Stop()
	for _, name := range []string{"alpha", "beta"} {
		fmt.Printf("%s %s\n", name, strings.Join(ids[name], ","))
	}
}
