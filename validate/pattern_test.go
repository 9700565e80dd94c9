package validate

import "testing"

func TestMatchLit(t *testing.T) {
	tests := []struct {
		pat, s string
		want   bool
	}{
		{"/usr", "/usr", true},
		{"/usr", "/us", false},
		{"/u*", "/usr", true},
		{"/u*", "/usr/bin", false},
		{"/*", "/", true},
		{"/*/bin", "/usr/bin", true},
		{"/**", "/usr/bin", true},
		{"/etc/sudoers.d/**", "/etc/sudoers.d/x", true},
		{"/b?n", "/bin", true},
		{"/b?n", "/b/n", false},
		{"/[a-f]tc", "/etc", true},
		{"/[!e]tc", "/etc", false},
		{"/dev/sd*", "/dev/sda1", true},
		{"/dev/fd[0-9]*", "/dev/fd/1", false},
		{"/dev/fd[0-9]*", "/dev/fd0", true},
		{"/dev/disk/*/*", "/dev/disk/by-id/x", true},
		{"/[[:alpha:]]sr", "/usr", true},
		{"a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
	}
	for _, tt := range tests {
		if got := matchLit(compilePattern(tt.pat), tt.s); got != tt.want {
			t.Errorf("matchLit(%q, %q) = %v; want %v", tt.pat, tt.s, got, tt.want)
		}
	}
	// An unknown expansion may be empty unless it is marked non-empty.
	unk := []ptok{{kind: tLit, b: '/'}, {kind: tUnknown}}
	if !matchLit(unk, "/") || !matchLit(unk, "/usr") || matchLit(unk, "/usr/bin") {
		t.Error("/$X should match / and /usr but not /usr/bin")
	}
	ne := []ptok{{kind: tLit, b: '/'}, {kind: tUnknown, b: unkNonEmpty}}
	if matchLit(ne, "/") || !matchLit(ne, "/usr") {
		t.Error("/${X:?} should match /usr but not /")
	}
}

func TestIntersects(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"/dev/sd?", "/dev/sd*", true},
		{"/dev/s*", "/dev/nvme*", false},
		{"/dev/*", "/dev/mem", true},
		{"/etc/pass*", "/etc/passwd", true},
		{"/etc/*/x", "/etc/passwd", false},
		{"/boot/**", "/boot/grub/grub.cfg", true},
		{"/[ab]", "/[cd]", false},
		{"/[ab]", "/?", true},
		{"*", "/x", false},
	}
	for _, tt := range tests {
		if got := intersects(compilePattern(tt.a), compilePattern(tt.b)); got != tt.want {
			t.Errorf("intersects(%q, %q) = %v; want %v", tt.a, tt.b, got, tt.want)
		}
		if got := intersects(compilePattern(tt.b), compilePattern(tt.a)); got != tt.want {
			t.Errorf("intersects(%q, %q) = %v; want %v", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestCleanToks(t *testing.T) {
	tests := []struct {
		in   []ptok
		want []string
	}{
		{compilePattern("/usr/../etc/./*"), []string{"/etc/*"}},
		{compilePattern("//"), []string{"/"}},
		{compilePattern("/*/.."), []string{"/"}},
		{compilePattern("/../.."), []string{"/"}},
		{append(compilePattern("/usr/"), ptok{kind: tUnknown}), []string{"/usr", "/usr/$…"}},
		{append([]ptok{{kind: tUnknown}}, compilePattern("/x")...), []string{"/x", "x", "$…/x"}},
	}
	for _, tt := range tests {
		var got []string
		for _, v := range cleanToks(tt.in) {
			got = append(got, tokString(v))
		}
		if len(got) != len(tt.want) {
			t.Errorf("cleanToks(%s) = %q; want %q", tokString(tt.in), got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("cleanToks(%s) = %q; want %q", tokString(tt.in), got, tt.want)
			}
		}
	}
}
