// Package constraints parses and evaluates Mesos offer attribute constraints in Spark's
// `spark.mesos.constraints` syntax (Flint key `flint.mesos.constraints`):
//
//	os:centos7;zone:us-east-1a,us-east-1b;gpu
//
// Terms are separated by ';'. Each term names an attribute, optionally followed by ':' and a
// comma-separated list of values. How an offer's attribute satisfies a term depends on the
// attribute's Mesos type:
//
//   - no value list: the attribute only has to be present, whatever its type;
//   - TEXT: the attribute's text equals one of the listed values;
//   - SCALAR: one of the listed values, read as a number, is at most the attribute's value
//     (compared at Mesos' three-decimal precision), as in Spark: "cpus:2" matches an agent whose
//     "cpus" attribute is 8, "cpus:4" matches 4.5, "cpus:5" does not;
//   - RANGES: one of the listed values, read as an unsigned integer, lies inside one of the
//     attribute's ranges;
//   - SET: the attribute's set contains every listed value.
//
// All terms must hold. Parse rejects malformed input (empty terms or values, a second ':' in a
// term, a repeated attribute) with a *SyntaxError that names the byte offset and the offending
// token. The package owns only the syntax and the matching; placement's constraint checker
// (framework/placement) filters the offers that do not match, for both Mesos modes.
package constraints
