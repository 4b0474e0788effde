package sink

import (
	"math"
	"strconv"
)

// FormatSize formats a byte count for notices (reference §3.9): below 1024 bytes "NB" with no decimal,
// else 1024 steps with one decimal, "50.0KB", "1.5MB", "2.0GB" (GB is the largest unit). A value
// that rounds to 1024.0 of a unit is shown in the next one ("1.0MB", not "1024.0KB").
func FormatSize(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + "B"
	}
	units := [...]string{"KB", "MB", "GB"}
	v := float64(n) / 1024
	u := 0
	for u < len(units)-1 && math.Round(v*10)/10 >= 1024 {
		v /= 1024
		u++
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + units[u]
}
