// Package driverseam is the internal seam between the user's API and the
// driver behind it: the dataset layer and Flint's own test kits reach a
// framework.Context's driver (framework/driver: RunStages, shuffle ids
// and releases, cached-partition locations), its UI store and its runtime environment
// (framework/stagetask.Env) here, so the
// Context shows users none of that plumbing. Only this module can import
// it.
//
// framework registers the accessor from its init; Of panics for anything
// that is not a *framework.Context.
package driverseam

import (
	"fmt"

	"github.com/flint-mesos/flint/framework/driver"
	"github.com/flint-mesos/flint/framework/stagetask"
	"github.com/flint-mesos/flint/framework/storage"
	"github.com/flint-mesos/flint/framework/uistore"
)

// Seam is what the dataset layer needs of a Context.
type Seam struct {
	// Driver is the Context's driver.
	Driver *driver.Driver
	// UIStore is the operator UI's store, nil when the UI is off.
	UIStore *uistore.Store
	// Env is the Context's runtime state in this process: in local mode
	// its in-process executor's environment (the local backend's), else a
	// driver-only one; the Context closes it when it stops.
	Env *stagetask.Env
	// Writes orders the Context's writes into each output directory.
	Writes *storage.Writes
}

var of func(fc any) (Seam, bool)

// Register sets the accessor (framework's init calls it).
func Register(f func(fc any) (Seam, bool)) { of = f }

// Of is the seam of fc, a *framework.Context.
func Of(fc any) Seam {
	if of == nil {
		panic("driverseam: framework registered no accessor (import github.com/flint-mesos/flint/framework)")
	}
	s, ok := of(fc)
	if !ok {
		panic(fmt.Sprintf("driverseam: %T is not a *framework.Context", fc))
	}
	return s
}
