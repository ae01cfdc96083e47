package engine

import (
	"errors"
	"testing"

	"github.com/statewright-go/statewright/workflow"
)

func TestFinish(t *testing.T) {
	def, _, err := workflow.Parse([]byte(`{"id":"f","initial":"a","meta":{"failure_states":["blocked"]},"states":{
	  "a":{"on":{"GO":{"invoke":"c","on_complete":"b","on_fail":"$return"}}},
	  "b":{"on":{"END":"done"}},
	  "h":{"on":{"BACK":"$return"}},
	  "blocked":{"type":"final"},
	  "done":{"type":"final"}}}`), workflow.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	frames := []Frame{{Return: "b", Interrupt: "x"}}
	tests := []struct {
		name, state, target string
		hist                []Frame
		wantTo              string
		wantFinal           bool
		wantHist            int
		wantErr             error
	}{
		{"on_complete", "a", "b", nil, "b", false, 0, nil},
		{"final target", "a", "done", frames, "done", true, 0, nil},
		{"$return pops the interrupt stack", "h", "$return", frames, "b", false, 0, nil},
		{"$return without an address", "a", "$return", nil, "", false, 0, ErrNoReturnAddress},
		{"no such state", "a", "nowhere", nil, "", false, 0, ErrStateNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Finish(def, Snapshot{State: tt.state, History: tt.hist, Context: map[string]any{"k": 1}}, "GO:completed", tt.target)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || out.To != tt.wantTo || out.Final != tt.wantFinal || len(out.History) != tt.wantHist || out.From != tt.state || out.Context["k"] != 1 {
				t.Fatalf("Finish = %+v, %v", out, err)
			}
		})
	}
	for state, want := range map[string]bool{"blocked": true, "failed": true, "Error": true, "done": false, "b": false} {
		if got := IsFailureState(def, state); got != want {
			t.Errorf("IsFailureState(%s) = %v", state, got)
		}
	}
	if IsFailureState(&workflow.Definition{}, "blocked") {
		t.Error("blocked is a failure state only where the workflow lists it")
	}
}
