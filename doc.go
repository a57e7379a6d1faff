// Package flint is the entry point of a Flint program: Main decides whether
// the binary was started as a driver (parse flags, build a framework.Context,
// run the user's job) or, by an agent, as an executor, so that one binary
// carries the task functions to every side. Importing it links every
// backend (local, embedded, and the Mesos coarse and fine backends, each
// registered from its package's init) and both executor roles.
//
//	func main() {
//		flint.Main(func(ctx context.Context, fc *framework.Context, args []string) error {
//			out, err := framework.Map(ctx, fc, square, []int{1, 2, 3})
//			...
//		})
//	}
package flint
