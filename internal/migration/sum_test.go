package migration

import (
	"errors"
	"slices"
	"testing"
)

// TestSumCatchesChanges: the embedded files match their atlas.sum, and an
// edited, missing or extra file does not.
func TestSumCatchesChanges(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		list, err := Files(dialect)
		if err != nil {
			t.Fatalf("%s: %v", dialect, err)
		}
		sum := sumFile(list)
		edited := slices.Clone(list)
		edited[0].SQL = append(slices.Clone(edited[0].SQL), ' ')
		for _, tc := range []struct {
			name string
			list []File
			want error
		}{
			{"intact", list, nil},
			{"edited", edited, errSum},
			{"missing", list[:len(list)-1], errSum},
			{"extra", append(slices.Clone(list), File{Name: "99999999999999_extra.sql", SQL: []byte("SELECT 1;")}), errSum},
		} {
			if err := checkSum(tc.list, sum); !errors.Is(err, tc.want) {
				t.Errorf("%s %s: err = %v, want %v", dialect, tc.name, err, tc.want)
			}
		}
	}
}
