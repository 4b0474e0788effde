package request

import "testing"

func TestClampTimeout(t *testing.T) {
	for _, tc := range []struct {
		in, want float64
		clamped  bool
	}{
		{300, 300, false}, {1, 1, false}, {3600, 3600, false}, {1.5, 1.5, false},
		{0, 1, true}, {-5, 1, true}, {0.5, 1, true}, {7200, 3600, true},
	} {
		got, clamped := ClampTimeout(tc.in)
		if got != tc.want || clamped != tc.clamped {
			t.Errorf("ClampTimeout(%v) = %v, %v; want %v, %v", tc.in, got, clamped, tc.want, tc.clamped)
		}
	}
}
