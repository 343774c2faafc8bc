package server

import (
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// incrementalDirectives are the directives of incremental delivery that
// gqlgen's prelude declares. None of the transports served here can carry
// the parts that follow the first (there is no multipart response, and
// POST answers with one JSON document): gqlgen would run the deferred
// fragments and drop them. An operation that uses one is refused as it is
// validated, whatever its transport (POST, GET, SSE, graphql-ws).
var incrementalDirectives = map[string]bool{"defer": true, "stream": true}

// noIncrementalDelivery is the validation rule that refuses @defer and
// @stream, naming the directive in extensions.field.
func noIncrementalDelivery(observers *core.Events, addError core.AddErrFunc) {
	observers.OnDirective(func(_ *core.Walker, d *ast.Directive) {
		if !incrementalDirectives[d.Name] {
			return
		}
		name := "@" + d.Name
		addError(
			core.Message("%s is not supported: every response is one JSON document; remove %s to receive the fields in it", name, name),
			core.At(d.Position),
			func(err *gqlerror.Error) {
				setField(err, name, "is not supported: every response is one JSON document")
			},
		)
	})
}

// operationRules are the validation rules of every operation: gqlgen's,
// with values refused naming their field (inputerrors.go), and no
// incremental delivery.
func operationRules() *rules.Rules {
	r := validationRules()
	r.AddRule("NoIncrementalDelivery", noIncrementalDelivery)
	return r
}
