package x

import "testing"

func TestX(t *testing.T) { undefined() }
