// bench/peers/sink: the OTLP/gRPC profiles sink for bench/peers.sh. The OpenTelemetry
// eBPF profiler exports over gRPC only; this takes its Export calls on -listen and
// appends one line per stack to -o: "pid<TAB>root;...;leaf<TAB>count". Frames without
// a function name (the profiler leaves native frames to the backend) are written as
// "0xADDR@FILE" so that bench/peers/check.py can name them with addr2line. On SIGTERM
// it writes the bytes it received on the wire (compressed, as sent) to -bytes.
// Built at bench time beside the profiler (same pdata version); never committed built.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/stats"
)

var wireBytes atomic.Int64

type counter struct{}

func (counter) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (counter) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (counter) HandleConn(context.Context, stats.ConnStats)                      {}
func (counter) HandleRPC(_ context.Context, s stats.RPCStats) {
	if p, ok := s.(*stats.InPayload); ok {
		wireBytes.Add(int64(p.WireLength))
	}
}

type sink struct {
	pprofileotlp.UnimplementedGRPCServer
	mu  sync.Mutex
	out *bufio.Writer
	f   *os.File
}

func (s *sink) Export(_ context.Context, req pprofileotlp.ExportRequest) (pprofileotlp.ExportResponse, error) {
	p := req.Profiles()
	d := p.Dictionary()
	strs := d.StringTable()
	str := func(i int32) string {
		if i < 0 || int(i) >= strs.Len() {
			return ""
		}
		return strs.At(int(i))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rps := p.ResourceProfiles()
	for i := 0; i < rps.Len(); i++ {
		sps := rps.At(i).ScopeProfiles()
		for j := 0; j < sps.Len(); j++ {
			prs := sps.At(j).Profiles()
			for k := 0; k < prs.Len(); k++ {
				s.profile(prs.At(k), d, str)
			}
		}
	}
	s.out.Flush()
	return pprofileotlp.NewExportResponse(), nil
}

func (s *sink) profile(pr pprofile.Profile, d pprofile.ProfilesDictionary, str func(int32) string) {
	attrs, stacks, locs := d.AttributeTable(), d.StackTable(), d.LocationTable()
	funcs, maps := d.FunctionTable(), d.MappingTable()
	smp := pr.Samples()
	for n := 0; n < smp.Len(); n++ {
		sm := smp.At(n)
		pid := int64(-1)
		for a := 0; a < sm.AttributeIndices().Len(); a++ {
			ai := int(sm.AttributeIndices().At(a))
			if ai < attrs.Len() && str(attrs.At(ai).KeyStrindex()) == "process.pid" {
				pid = attrs.At(ai).Value().Int()
			}
		}
		count := int64(sm.TimestampsUnixNano().Len())
		if count == 0 {
			for v := 0; v < sm.Values().Len(); v++ {
				count += sm.Values().At(v)
			}
		}
		if count == 0 {
			count = 1
		}
		var frames []string
		if si := int(sm.StackIndex()); si < stacks.Len() {
			li := stacks.At(si).LocationIndices()
			for x := li.Len() - 1; x >= 0; x-- { // leaf first on the wire
				l := int(li.At(x))
				if l >= locs.Len() {
					continue
				}
				frames = append(frames, frame(locs.At(l), funcs, maps, str)...)
			}
		}
		fmt.Fprintf(s.out, "%d\t%s\t%d\n", pid, strings.Join(frames, ";"), count)
	}
}

// frame names one location, its inlined functions outermost first
func frame(l pprofile.Location, funcs pprofile.FunctionSlice, maps pprofile.MappingSlice,
	str func(int32) string) []string {
	var out []string
	lines := l.Lines()
	for i := lines.Len() - 1; i >= 0; i-- {
		fi := int(lines.At(i).FunctionIndex())
		if fi < funcs.Len() {
			if name := str(funcs.At(fi).NameStrindex()); name != "" {
				out = append(out, strings.ReplaceAll(name, ";", ":"))
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	file := ""
	if mi := int(l.MappingIndex()); mi > 0 && mi < maps.Len() {
		file = str(maps.At(mi).FilenameStrindex())
	}
	return []string{fmt.Sprintf("0x%x@%s", l.Address(), file)}
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	outPath := flag.String("o", "stacks.txt", "stacks file")
	bytesPath := flag.String("bytes", "", "file for the bytes received, written on SIGTERM")
	flag.Parse()
	f, err := os.Create(*outPath)
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ln.Addr().String()) // the script reads the port from here
	os.Stdout.Sync()
	srv := grpc.NewServer(grpc.StatsHandler(counter{}), grpc.MaxRecvMsgSize(64<<20))
	s := &sink{out: bufio.NewWriter(f), f: f}
	pprofileotlp.RegisterGRPCServer(srv, s)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		srv.Stop()
	}()
	_ = srv.Serve(ln)
	s.mu.Lock()
	s.out.Flush()
	f.Close()
	s.mu.Unlock()
	if *bytesPath != "" {
		_ = os.WriteFile(*bytesPath, []byte(fmt.Sprintf("%d\n", wireBytes.Load())), 0o644)
	}
}
