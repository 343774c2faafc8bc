package service_test

import (
	"sync"
	"testing"

	"github.com/acme/itemsvc/ent/user"
	"github.com/acme/itemsvc/internal/service"
	"github.com/acme/itemsvc/internal/testutil"
)

// TestLastAdminStaysUnderRace: two admins demoting or disabling each other
// at the same moment cannot leave the service without an enabled admin:
// exactly one change succeeds, the other is VALIDATION_ERROR, on both
// databases (PostgreSQL locks the admins' rows; SQLite has one writer).
func TestLastAdminStaysUnderRace(t *testing.T) {
	env := testutil.New(t)
	svc := env.App.Service
	ctx := service.System(t.Context())
	second, err := svc.CreateUser(ctx, "second@example.com", "Second", "admin")
	if err != nil {
		t.Fatal(err)
	}
	demote, disable := "user", true
	for round, changes := range [][2]service.UserChanges{
		{{Role: &demote}, {Role: &demote}},
		{{Disabled: &disable}, {Role: &demote}},
		{{Disabled: &disable}, {Disabled: &disable}},
	} {
		ids := [2]string{env.Admin.UserID, second.ID}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = svc.UpdateUser(ctx, ids[i], changes[i])
			}()
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("round %d: errors %v and %v; want exactly one refused", round, errs[0], errs[1])
		}
		n, err := env.App.DB.Client.User.Query().Where(user.RoleEQ(user.RoleAdmin), user.Disabled(false)).Count(ctx)
		if err != nil || n != 1 {
			t.Fatalf("round %d: %d enabled admins (%v), want 1", round, n, err)
		}
		// Restore both admins for the next round.
		admin, enabled := "admin", false
		for _, id := range ids {
			if _, err := svc.UpdateUser(ctx, id, service.UserChanges{Role: &admin, Disabled: &enabled}); err != nil {
				t.Fatal(err)
			}
		}
	}
}
