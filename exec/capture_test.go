package exec

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestCaptureFits(t *testing.T) {
	c := newCapture(10, Stdout, nil)
	c.Write([]byte("hello"))
	c.Write([]byte("world"))
	out := c.Output()
	if string(out.Data) != "helloworld" || out.Total != 10 || out.Dropped != 0 {
		t.Fatalf("got %+v", out)
	}
}

func TestCaptureHeadAndTail(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"one big write", 6, []string{"abcdefghij"}, "abchij"},
		{"byte by byte", 6, []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}, "abchij"},
		{"overflow on second", 4, []string{"abc", "defg"}, "abfg"},
		{"odd cap", 5, []string{"0123456789"}, "01789"},
		{"wraps exactly", 4, []string{"ab", "cd", "ef", "gh"}, "abgh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCapture(tt.max, Stdout, nil)
			var all []byte
			for _, w := range tt.writes {
				c.Write([]byte(w))
				all = append(all, w...)
			}
			out := c.Output()
			if string(out.Data) != tt.want {
				t.Errorf("Data = %q, want %q", out.Data, tt.want)
			}
			if out.Total != int64(len(all)) || out.Dropped != int64(len(all)-len(tt.want)) {
				t.Errorf("Total %d Dropped %d", out.Total, out.Dropped)
			}
			if out.Head != tt.max/2 {
				t.Errorf("Head = %d, want %d", out.Head, tt.max/2)
			}
		})
	}
}

// TestCaptureProperty checks against a reference: the kept data is always
// the stream's first max/2 bytes and its last max-max/2 bytes.
func TestCaptureProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		max := 1 + r.IntN(64)
		c := newCapture(max, Stderr, nil)
		var all []byte
		for n := r.IntN(20); n > 0; n-- {
			p := make([]byte, r.IntN(40))
			for j := range p {
				p[j] = byte('a' + r.IntN(26))
			}
			if n, err := c.Write(p); n != len(p) || err != nil {
				t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(p))
			}
			all = append(all, p...)
		}
		out := c.Output()
		want := all
		if len(all) > max {
			head := max / 2
			want = append(append([]byte{}, all[:head]...), all[len(all)-(max-head):]...)
		}
		if !bytes.Equal(out.Data, want) {
			t.Fatalf("max %d, stream %q: got %q want %q", max, all, out.Data, want)
		}
	}
}

// TestCapturePropertyLarge runs the same reference check with caps above
// the size at which the buffer is allocated whole, so that the head and the
// tail ring share one array.
func TestCapturePropertyLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 200; i++ {
		max := 70<<10 + r.IntN(200<<10)
		c := newCapture(max, Stdout, nil)
		var all []byte
		for n := r.IntN(30); n > 0; n-- {
			p := make([]byte, r.IntN(60<<10))
			for j := range p {
				p[j] = byte(r.IntN(256))
			}
			if n, err := c.Write(p); n != len(p) || err != nil {
				t.Fatalf("Write = %d, %v", n, err)
			}
			all = append(all, p...)
		}
		out := c.Output()
		want := all
		if len(all) > max {
			head := max / 2
			want = append(append([]byte{}, all[:head]...), all[len(all)-(max-head):]...)
		}
		if !bytes.Equal(out.Data, want) || out.Total != int64(len(all)) {
			t.Fatalf("max %d, %d bytes: kept data differs from the reference", max, len(all))
		}
		if cap(c.buf) > max || (c.tail != nil && cap(c.tail) > max) {
			t.Fatalf("buffers exceed the cap: %d, %d", cap(c.buf), cap(c.tail))
		}
	}
}

// TestCaptureOutputInPlace checks that a stream over the cap is returned
// from the capture's own array, rotated in place rather than copied (the
// kept output is held once), and that asking again gives the same.
func TestCaptureOutputInPlace(t *testing.T) {
	for _, total := range []int{100 << 10, 100<<10 + 7, 300 << 10} { // wrapped or not
		max := 128 << 10
		c := newCapture(max, Stdout, nil)
		var all []byte
		for i := 0; len(all) < total; i++ {
			p := bytes.Repeat([]byte{byte('a' + i%26)}, min(9<<10, total-len(all)))
			c.Write(p)
			all = append(all, p...)
		}
		if total <= max {
			continue
		}
		allocs := testing.AllocsPerRun(1, func() { c.Output() })
		out := c.Output()
		head := max / 2
		want := append(append([]byte{}, all[:head]...), all[len(all)-(max-head):]...)
		if !bytes.Equal(out.Data, want) {
			t.Fatalf("%d bytes: kept data differs from the reference", total)
		}
		if allocs != 0 {
			t.Errorf("%d bytes: output allocated %v times, want 0 (rotate in place)", total, allocs)
		}
		if &out.Data[0] != &c.arr[0] {
			t.Errorf("%d bytes: output is a copy, not the capture's array", total)
		}
	}
	// Over the cap without wrapping the ring.
	c := newCapture(10, Stdout, nil)
	c.Write([]byte("abcdefghijk")) // 11 bytes: head abcde, the last 5 in the ring, f dropped
	out1, out2 := c.Output(), c.Output()
	if string(out1.Data) != "abcdeghijk" || string(out2.Data) != string(out1.Data) {
		t.Fatalf("got %q then %q, want abcdeghijk twice", out1.Data, out2.Data)
	}
}
