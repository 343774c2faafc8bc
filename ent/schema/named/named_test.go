package named

import (
	"strings"
	"testing"
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/mixin"
)

// NowForTest is a named default function, as the schemas use.
func NowForTest() string { return "x" }

func TestNotEmptyMatchesEnt(t *testing.T) {
	entNotEmpty := field.String("f").NotEmpty().Descriptor().Validators[0].(func(string) error)
	for _, v := range []string{"", "a", "ab"} {
		got, want := NotEmpty(v), entNotEmpty(v)
		if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
			t.Errorf("NotEmpty(%q) = %v; ent's NotEmpty: %v", v, got, want)
		}
	}
}

func TestHelpersRecordWhatTheySet(t *testing.T) {
	desc := Validate(DefaultFunc(field.String("f"), NowForTest), NotEmpty, NotEmpty).Descriptor()
	if len(desc.Validators) != 2 || desc.Default == nil {
		t.Fatalf("validators %d, default %v: the helpers did not set them", len(desc.Validators), desc.Default)
	}
	if len(desc.Annotations) != 2 {
		t.Fatalf("annotations: %v", desc.Annotations)
	}
	a := desc.Annotations[0].(Annotation).Merge(desc.Annotations[1]).(Annotation)
	const pkg = "github.com/acme/itemsvc/ent/schema/named."
	if a.Default != pkg+"NowForTest" || len(a.Validators) != 2 || a.Validators[0] != pkg+"NotEmpty" {
		t.Errorf("merged annotation = %+v", a)
	}
	times := UpdateDefault(Default(field.Time("t"), NowForTime), NowForTime).Descriptor()
	if times.Default == nil || times.UpdateDefault == nil || len(times.Annotations) != 2 {
		t.Errorf("time field: default %v, update default %v, annotations %v", times.Default, times.UpdateDefault, times.Annotations)
	}
}

func TestUnnameableFunctionsPanic(t *testing.T) {
	closure := func(string) error { return nil }
	for name, fn := range map[string]func(){
		"closure":    func() { Validate(field.String("f"), closure) },
		"unexported": func() { Validate(field.String("f"), unexported) },
		"method":     func() { Validate(field.String("f"), checker{}.Check) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "named:") {
					t.Errorf("recovered %v; want a panic naming the function", r)
				}
			}()
			fn()
		})
	}
}

func TestSplit(t *testing.T) {
	path, name, err := Split("github.com/acme/itemsvc/ent/schema.Now")
	if err != nil || path != "github.com/acme/itemsvc/ent/schema" || name != "Now" {
		t.Errorf("Split = %q, %q, %v", path, name, err)
	}
	for _, bad := range []string{"Now", "pkg.now", "pkg.T.M", "pkg.F.func1", "pkg.F[...]", "gopkg.in/yaml.v3.F"} {
		if _, _, err := Split(bad); err == nil {
			t.Errorf("Split(%q) accepted it", bad)
		}
	}
}

type timeMixin struct{ mixin.Schema }

type TimeMixinForTest struct{ mixin.Schema }

func (TimeMixinForTest) Hooks() []ent.Hook { return make([]ent.Hook, 2) }

type withField struct {
	mixin.Schema
	Prefix string
}

func TestMixin(t *testing.T) {
	got := Mixin(TimeMixinForTest{}).List
	if len(got) != 1 || got[0].Type != "github.com/acme/itemsvc/ent/schema/named.TimeMixinForTest" || got[0].Hooks != 2 {
		t.Errorf("Mixin = %+v", got)
	}
	for name, m := range map[string]ent.Mixin{"unexported": timeMixin{}, "not zero": withField{Prefix: "x"}, "pointer": &TimeMixinForTest{}} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			Mixin(m)
		})
	}
}

func NowForTime() time.Time { return time.Time{} }

func unexported(string) error { return nil }

type checker struct{}

func (checker) Check(string) error { return nil }
