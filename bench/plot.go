package main

import (
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
	suffix string // series key after "2/<transport>/"
	label  string
	color  color.RGBA
	dashed bool // floors are dashed
}

// latencyCurves are scenario 2's series, rigout first, then the floors.
func latencyCurves() []curve {
	return []curve{
		{"rigout-argv", "rigout argv [true]", color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, false},
		{"rigout-command", "rigout command \"true\"", color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, false},
		{"floor-true", "fork/exec true", color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, true},
		{"floor-bash", "fork/exec bash -c true", color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, true},
		{"floor-sh", "fork/exec sh -c true", color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, true},
	}
}

// hasLatency reports whether res holds scenario 2's series, which the
// plot draws.
func hasLatency(res *Results) bool {
	res.mu.Lock()
	defer res.mu.Unlock()
	return len(res.Series["2/stdio/rigout-argv"].Samples) > 0 || len(res.Series["2/http/rigout-argv"].Samples) > 0
}

// latencyPlot draws the cumulative distributions of scenario 2's
// latencies, one panel per transport, rigout's as solid lines and the
// floors' dashed, on a log scale, and writes them to path as PNG.
// Scenario 7 (SSH) joins the plot when it lands.
func latencyPlot(res *Results, path string) error {
	res.mu.Lock()
	defer res.mu.Unlock()
	var row []*plot.Plot
	for _, tr := range []struct{ key, title string }{{"stdio", "stdio"}, {"http", "HTTP (auth + audit)"}} {
		p := plot.New()
		p.Title.Text = "Scenario 2: execute_command, " + tr.title
		p.X.Label.Text = "latency (ms, log scale)"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Y.Label.Text = "fraction of calls at or below"
		p.Y.Min, p.Y.Max = 0, 1
		p.Legend.Top = false
		p.Legend.Left = false
		p.Add(plotter.NewGrid())
		for _, c := range latencyCurves() {
			xs := res.Series["2/"+tr.key+"/"+c.suffix].Samples
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
		}
		row = append(row, p)
	}
	img := vgimg.New(vg.Points(1100), vg.Points(450))
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
