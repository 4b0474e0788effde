package supervisor

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/agentbash/agentbash/pkg/run"
	"github.com/agentbash/agentbash/pkg/sink"
)

// fill sets every exported field of the struct v points to a value other than its zero, by kind.
func fill(t testing.TB, v reflect.Value) {
	t.Helper()
	v = v.Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString("x" + v.Type().Field(i).Name)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i) + 1)
		case reflect.Slice:
			s := reflect.MakeSlice(f.Type(), 1, 1)
			switch e := s.Index(0); e.Kind() {
			case reflect.String:
				e.SetString("w")
			case reflect.Int:
				e.SetInt(42)
			default:
				continue // a slice of structs: left for its own tests
			}
			f.Set(s)
		}
	}
}

// The done event carries every field of the outcome and the summary that is not zero, and a run with
// nothing to say (`true`) sends a short event: zero fields are left out, and read back as zero.
func TestDoneEventRoundTrip(t *testing.T) {
	var o run.Outcome
	var s sink.Summary
	fill(t, reflect.ValueOf(&o))
	fill(t, reflect.ValueOf(&s))
	o.Duration = 3 * time.Second
	for _, ev := range []Event{
		{Op: OpDone, Outcome: &o, Summary: &s, Reusable: true},
		{Op: OpDone, Outcome: &run.Outcome{ExitCode: -1}, Summary: &sink.Summary{}},
	} {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var got Event
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, ev) {
			t.Fatalf("read back\n%+v\n%+v\nwant\n%+v\n%+v\nfrom %s", *got.Outcome, *got.Summary, *ev.Outcome, *ev.Summary, b)
		}
	}
	b, _ := json.Marshal(Event{Op: OpDone, Outcome: &run.Outcome{}, Summary: &sink.Summary{}, Reusable: true})
	if want := `{"op":"done","outcome":{},"summary":{},"reusable":true}`; string(b) != want {
		t.Fatalf("the done event of a run with nothing to say is %s, want %s", b, want)
	}
}
