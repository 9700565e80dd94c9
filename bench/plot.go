package main

import (
	"errors"
	"image/color"
	"os"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// curve is one latency series drawn in the plot.
type curve struct {
	key    string // series key
	label  string
	color  color.RGBA
	dashed bool // floors are dashed
}

// panel is one chart of the plot.
type panel struct {
	title  string
	curves []curve
}

// latencyPanels are the charts: scenario 2 over each transport, then
// scenario 7. Rigout's series are solid, the floors dashed in the same
// colour.
func latencyPanels() []panel {
	red := color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	blue := color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
	green := color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}
	var ps []panel
	for _, tr := range []struct{ key, title string }{{"stdio", "stdio"}, {"http", "HTTP (auth + audit)"}} {
		k := "2/" + tr.key + "/"
		ps = append(ps, panel{"Scenario 2: execute_command, " + tr.title, []curve{
			{k + "rigout-argv", "rigout argv [true]", red, false},
			{k + "rigout-command", "rigout command \"true\"", blue, false},
			{k + "floor-true", "fork/exec true", red, true},
			{k + "floor-bash", "fork/exec bash -c true", blue, true},
			{k + "floor-sh", "fork/exec sh -c true", green, true},
		}})
	}
	ps = append(ps, panel{"Scenario 7: SSH to loopback sshd, `true`", []curve{
		{"7/gateway-warm/rigout", "execute_command host, HTTP, warm", green, false},
		{"7/warm/rigout", "exec.Router, pooled connection", red, false},
		{"7/warm/floor", "ssh via ControlMaster", red, true},
		{"7/fresh/rigout", "exec.Router, new connection", blue, false},
		{"7/fresh/floor", "fresh ssh", blue, true},
	}})
	return ps
}

// hasLatency reports whether res holds a series the plot draws.
func hasLatency(res *Results) bool {
	res.mu.Lock()
	defer res.mu.Unlock()
	for _, p := range latencyPanels() {
		for _, c := range p.curves {
			if len(res.Series[c.key].Samples) > 0 {
				return true
			}
		}
	}
	return false
}

// latencyPlot draws the cumulative distributions of the latencies of
// scenarios 2 and 7 against their floors, one panel per transport, on a log
// scale, and writes them to path as PNG. Panels without samples are left
// out.
func latencyPlot(res *Results, path string) error {
	res.mu.Lock()
	defer res.mu.Unlock()
	var row []*plot.Plot
	for _, pn := range latencyPanels() {
		p := plot.New()
		p.Title.Text = pn.title
		p.X.Label.Text = "latency (ms, log scale)"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Label.Text = "fraction of calls at or below"
		// The legend sits above the curves, in a band the axis leaves
		// empty over 100%.
		p.Y.Min, p.Y.Max = 0, 1.45
		p.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 0.25, Label: "25%"},
			{Value: 0.5, Label: "50%"}, {Value: 0.75, Label: "75%"}, {Value: 0.95, Label: "95%"}, {Value: 1, Label: ""}})
		p.Legend.Top = true
		p.Legend.Left = true
		p.Legend.XOffs = vg.Points(8)
		p.Add(plotter.NewGrid())
		drawn := 0
		for _, c := range pn.curves {
			xs := res.Series[c.key].Samples
			if len(xs) == 0 {
				continue
			}
			l, err := plotter.NewLine(ecdf(xs))
			if err != nil {
				return err
			}
			l.Color = c.color
			l.Width = vg.Points(1.5)
			if c.dashed {
				l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			}
			p.Add(l)
			p.Legend.Add(c.label, l)
			drawn++
		}
		if drawn > 0 {
			row = append(row, p)
		}
	}
	if len(row) == 0 {
		return errors.New("no latency samples to plot")
	}
	img := vgimg.New(vg.Points(float64(520*len(row))), vg.Points(450))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(row), PadX: vg.Points(20), PadTop: vg.Points(10), PadBottom: vg.Points(10), PadLeft: vg.Points(10), PadRight: vg.Points(10)}
	canvases := plot.Align([][]*plot.Plot{row}, tiles, dc)
	for i, p := range row {
		p.Draw(canvases[0][i])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ecdf returns the empirical cumulative distribution of xs as points
// (x, fraction of samples ≤ x).
func ecdf(xs []float64) plotter.XYs {
	s := slices.Clone(xs)
	slices.Sort(s)
	pts := make(plotter.XYs, 0, len(s))
	for i, x := range s {
		if x <= 0 {
			continue // a log axis cannot show it
		}
		pts = append(pts, plotter.XY{X: x, Y: float64(i+1) / float64(len(s))})
	}
	return pts
}
