package a

import "testing"

func TestPass(t *testing.T) { t.Log("hello from TestPass") }

func TestSub(t *testing.T) {
	t.Run("one", func(t *testing.T) {})
	t.Run("two", func(t *testing.T) {})
}

func TestSkip(t *testing.T) { t.Skip("not today") }
