// connectq drives kiln's Connect querier API with the client Grafana's Pyroscope
// datasource uses: the generated Connect client of github.com/grafana/pyroscope/api.
// Built at test time by tests/e2e/server_connect_query.sh (the module comes from the Go
// module proxy then; nothing of it is kept in the tree).
//
//	connectq [-json] URL types
//	connectq [-json] URL names SELECTOR
//	connectq [-json] URL values NAME SELECTOR
//	connectq [-json] URL series
//	connectq [-json] URL totals TYPE SELECTOR [GROUP_BY]
//	connectq [-json] URL functions TYPE SELECTOR
//	connectq [-json] URL spans TYPE SELECTOR SPAN_ID[,SPAN_ID...]
//	connectq [-json] URL diff TYPE LEFT_SELECTOR RIGHT_SELECTOR
//
// "totals" prints the flamegraph total, the pprof sum of its first sample type and the
// sum of SelectSeries points (one line per series when grouped). "functions" prints the
// flamegraph total of SelectMergeStacktraces, then "NAME TOTAL" per function name (its
// nodes' totals added up); "spans" the same of SelectMergeSpanProfile for those span ids,
// and the total of its tree bytes (binary requests only). "diff" prints Diff's left and
// right ticks and total, and the sums of the left and the right selves of its nodes.
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"connectrpc.com/connect"
	querierv1 "github.com/grafana/pyroscope/api/gen/proto/go/querier/v1"
	"github.com/grafana/pyroscope/api/gen/proto/go/querier/v1/querierv1connect"
	typesv1 "github.com/grafana/pyroscope/api/gen/proto/go/types/v1"
)

// treeTotal sums the self values of Pyroscope's tree bytes: per node in pre-order a
// varint name length, the name, a varint self and a varint child count.
func treeTotal(b []byte) (int64, error) {
	var total int64
	pending := 1
	if len(b) == 0 {
		return 0, nil
	}
	for pending > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return 0, fmt.Errorf("bad tree name length")
		}
		b = b[k+int(n):]
		self, k := binary.Uvarint(b)
		if k <= 0 {
			return 0, fmt.Errorf("bad tree self")
		}
		b = b[k:]
		kids, k := binary.Uvarint(b)
		if k <= 0 {
			return 0, fmt.Errorf("bad tree child count")
		}
		b = b[k:]
		total += int64(self)
		pending += int(kids) - 1
	}
	if len(b) != 0 {
		return 0, fmt.Errorf("%d bytes after the tree", len(b))
	}
	return total, nil
}

// printFunctions prints a flamegraph's total and each name's summed node totals. A level
// holds per node its x offset (relative), total, self and name index.
func printFunctions(g *querierv1.FlameGraph) {
	fmt.Printf("total %d\n", g.Total)
	sums := map[string]int64{}
	var order []string
	for _, l := range g.Levels {
		for i := 0; i+3 < len(l.Values); i += 4 {
			n := l.Values[i+3]
			if n < 0 || int(n) >= len(g.Names) {
				die(fmt.Errorf("name index %d of %d names", n, len(g.Names)))
			}
			name := g.Names[n]
			if _, ok := sums[name]; !ok {
				order = append(order, name)
			}
			sums[name] += l.Values[i+1]
		}
	}
	for _, name := range order {
		fmt.Printf("%s %d\n", name, sums[name])
	}
}

func die(err error) {
	fmt.Fprintln(os.Stderr, "connectq:", err)
	os.Exit(1)
}

func main() {
	useJSON := flag.Bool("json", false, "use Connect's JSON encoding")
	flag.Parse()
	args := flag.Args()
	if len(args) < 2 {
		die(fmt.Errorf("usage: connectq [-json] URL COMMAND ..."))
	}
	var opts []connect.ClientOption
	if *useJSON {
		opts = append(opts, connect.WithProtoJSON())
	}
	c := querierv1connect.NewQuerierServiceClient(http.DefaultClient, args[0], opts...)
	ctx := context.Background()
	end := time.Now().Add(time.Minute).UnixMilli()
	start := end - 2*3600*1000

	switch args[1] {
	case "types":
		r, err := c.ProfileTypes(ctx, connect.NewRequest(&querierv1.ProfileTypesRequest{
			Start: start, End: end}))
		if err != nil {
			die(err)
		}
		for _, t := range r.Msg.ProfileTypes {
			fmt.Printf("%s %s %s %s %s %s\n", t.ID, t.Name, t.SampleType, t.SampleUnit,
				t.PeriodType, t.PeriodUnit)
		}
	case "names":
		r, err := c.LabelNames(ctx, connect.NewRequest(&typesv1.LabelNamesRequest{
			Matchers: []string{args[2]}, Start: start, End: end}))
		if err != nil {
			die(err)
		}
		fmt.Println(strings.Join(r.Msg.Names, " "))
	case "values":
		r, err := c.LabelValues(ctx, connect.NewRequest(&typesv1.LabelValuesRequest{
			Name: args[2], Matchers: []string{args[3]}, Start: start, End: end}))
		if err != nil {
			die(err)
		}
		fmt.Println(strings.Join(r.Msg.Names, " "))
	case "series":
		r, err := c.Series(ctx, connect.NewRequest(&querierv1.SeriesRequest{
			LabelNames: []string{"service_name", "__profile_type__"}, Start: start, End: end}))
		if err != nil {
			die(err)
		}
		for _, s := range r.Msg.LabelsSet {
			var kv []string
			for _, l := range s.Labels {
				kv = append(kv, l.Name+"="+l.Value)
			}
			fmt.Println(strings.Join(kv, ","))
		}
	case "totals":
		typ, sel := args[2], args[3]
		fg, err := c.SelectMergeStacktraces(ctx, connect.NewRequest(
			&querierv1.SelectMergeStacktracesRequest{ProfileTypeID: typ, LabelSelector: sel,
				Start: start, End: end}))
		if err != nil {
			die(err)
		}
		pp, err := c.SelectMergeProfile(ctx, connect.NewRequest(
			&querierv1.SelectMergeProfileRequest{ProfileTypeID: typ, LabelSelector: sel,
				Start: start, End: end}))
		if err != nil {
			die(err)
		}
		var psum int64
		for _, s := range pp.Msg.Sample {
			psum += s.Value[0]
		}
		// the same in the other formats: pprof inside the answer, and Pyroscope's tree
		fp, err := c.SelectMergeStacktraces(ctx, connect.NewRequest(
			&querierv1.SelectMergeStacktracesRequest{ProfileTypeID: typ, LabelSelector: sel,
				Start: start, End: end, Format: querierv1.ProfileFormat_PROFILE_FORMAT_PPROF}))
		if err != nil {
			die(err)
		}
		var fsum int64
		for _, s := range fp.Msg.GetPprof().GetProfile().GetSample() {
			fsum += s.Value[0]
		}
		ft, err := c.SelectMergeStacktraces(ctx, connect.NewRequest(
			&querierv1.SelectMergeStacktracesRequest{ProfileTypeID: typ, LabelSelector: sel,
				Start: start, End: end, Format: querierv1.ProfileFormat_PROFILE_FORMAT_TREE}))
		var tsum int64
		if *useJSON {
			tsum = psum // the tree is bytes, which kiln sends over application/proto only
			if err == nil || connect.CodeOf(err) != connect.CodeUnimplemented {
				die(fmt.Errorf("a JSON tree request was not refused as unimplemented: %v", err))
			}
		} else if err != nil {
			die(err)
		} else if tsum, err = treeTotal(ft.Msg.Tree); err != nil {
			die(err)
		}
		if fsum == psum && tsum == psum {
			fmt.Printf("flamegraph %d pprof %d\n", fg.Msg.Flamegraph.Total, psum)
		} else {
			fmt.Printf("flamegraph %d pprof %d format-pprof %d tree %d\n",
				fg.Msg.Flamegraph.Total, psum, fsum, tsum)
		}
		var group []string
		if len(args) > 4 {
			group = strings.Split(args[4], ",")
		}
		ss, err := c.SelectSeries(ctx, connect.NewRequest(&querierv1.SelectSeriesRequest{
			ProfileTypeID: typ, LabelSelector: sel, Start: start, End: end, Step: 60,
			GroupBy: group}))
		if err != nil {
			die(err)
		}
		for _, s := range ss.Msg.Series {
			var sum float64
			for _, p := range s.Points {
				sum += p.Value
			}
			var kv []string
			for _, l := range s.Labels {
				kv = append(kv, l.Name+"="+l.Value)
			}
			fmt.Printf("series {%s} %.0f\n", strings.Join(kv, ","), sum)
		}
	case "functions":
		fg, err := c.SelectMergeStacktraces(ctx, connect.NewRequest(
			&querierv1.SelectMergeStacktracesRequest{ProfileTypeID: args[2],
				LabelSelector: args[3], Start: start, End: end}))
		if err != nil {
			die(err)
		}
		printFunctions(fg.Msg.Flamegraph)
	case "spans":
		// "@FILE": the ids are in FILE (a long list exceeds the argument limit)
		ids := args[4]
		if strings.HasPrefix(ids, "@") {
			b, err := os.ReadFile(ids[1:])
			if err != nil {
				die(err)
			}
			ids = strings.TrimSpace(string(b))
		}
		req := &querierv1.SelectMergeSpanProfileRequest{ProfileTypeID: args[2],
			LabelSelector: args[3], SpanSelector: strings.Split(ids, ","),
			Start: start, End: end}
		fg, err := c.SelectMergeSpanProfile(ctx, connect.NewRequest(req))
		if err != nil {
			die(err)
		}
		if !*useJSON {
			req.Format = querierv1.ProfileFormat_PROFILE_FORMAT_TREE
			ft, err := c.SelectMergeSpanProfile(ctx, connect.NewRequest(req))
			if err != nil {
				die(err)
			}
			tsum, err := treeTotal(ft.Msg.Tree)
			if err != nil {
				die(err)
			}
			fmt.Printf("tree %d\n", tsum)
		}
		printFunctions(fg.Msg.Flamegraph)
	case "diff":
		sel := func(s string) *querierv1.SelectMergeStacktracesRequest {
			return &querierv1.SelectMergeStacktracesRequest{ProfileTypeID: args[2],
				LabelSelector: s, Start: start, End: end}
		}
		d, err := c.Diff(ctx, connect.NewRequest(&querierv1.DiffRequest{
			Left: sel(args[3]), Right: sel(args[4])}))
		if err != nil {
			die(err)
		}
		g := d.Msg.Flamegraph
		var ls, rs int64
		for _, l := range g.Levels {
			if len(l.Values)%7 != 0 {
				die(fmt.Errorf("a diff level of %d values", len(l.Values)))
			}
			for i := 0; i < len(l.Values); i += 7 {
				if n := l.Values[i+6]; n < 0 || int(n) >= len(g.Names) {
					die(fmt.Errorf("name index %d of %d names", n, len(g.Names)))
				}
				ls += l.Values[i+2]
				rs += l.Values[i+5]
			}
		}
		fmt.Printf("left %d right %d total %d selves %d %d\n", g.LeftTicks, g.RightTicks,
			g.Total, ls, rs)
	default:
		die(fmt.Errorf("unknown command %q", args[1]))
	}
}
