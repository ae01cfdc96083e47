package sqlite

import (
	"database/sql/driver"
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// TestDriverValue: the writer converts its statements' arguments as
// database/sql does for a driver without a converter of its own.
func TestDriverValue(t *testing.T) {
	s := "text"
	var nilStr *string
	for _, a := range []any{nil, "x", int64(-3), 7, []byte("b"), 1.5, true, &s, nilStr, json.RawMessage(`{"a":1}`),
		int32(4), uint8(9), time.Unix(5, 0), struct{}{}} {
		want, werr := driver.DefaultParameterConverter.ConvertValue(a)
		got, err := driverValue(a)
		if (err != nil) != (werr != nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("driverValue(%#v) = %#v, %v; database/sql converts it to %#v, %v", a, got, err, want, werr)
		}
	}
}

// TestDriverRowScan: a row as the driver returns it scans into the kinds
// the writer's queries read, and refuses what database/sql would refuse
// (a NULL string or integer) or what it was not made for.
func TestDriverRowScan(t *testing.T) {
	var (
		s1, s2 string
		b1, b2 []byte
		n      int64
	)
	blob := []byte("blob")
	r := driverRow{vals: []driver.Value{"text", blob, blob, nil, int64(42)}}
	if err := r.Scan(&s1, &s2, &b1, &b2, &n); err != nil {
		t.Fatal(err)
	}
	if s1 != "text" || s2 != "blob" || string(b1) != "blob" || b2 != nil || n != 42 {
		t.Errorf("scanned %q %q %q %v %d", s1, s2, b1, b2, n)
	}
	blob[0] = 'X'
	if string(b1) != "blob" {
		t.Errorf("a scanned []byte shares the driver's buffer: %q", b1)
	}
	var f float64
	for _, tc := range []struct {
		v    driver.Value
		dest any
	}{{nil, &s1}, {nil, &n}, {"1", &n}, {int64(1), &s1}, {1.5, &f}} {
		if err := (driverRow{vals: []driver.Value{tc.v}}).Scan(tc.dest); err == nil {
			t.Errorf("scanning %#v into %T: no error", tc.v, tc.dest)
		}
	}
	if err := r.Scan(&s1); err == nil {
		t.Error("scanning 5 columns into 1 destination: no error")
	}
}
