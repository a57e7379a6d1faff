// Package backend is the SPI between the driver and the backends that run
// tasks (framework/local, coarse, fine, deploy/embedded), apart from the
// user API in framework: the Backend a backend implements and the Driver it
// reports to, the ordered Batch of effects, the optional interfaces
// (TaskSizeLimiter, OfferExplainer, SandboxLocator, FileServer), the
// registry of backends by name (Register, New) and the master strings that
// pick one (ParseMaster). Its types are in Flint's own terms: the task
// attempts the driver loop places on executors and the status updates the
// backends report back. Wire messages
// (proto/flintpb) stay in the transports: the coarse gateway, fine mode's
// status translation and the executors convert with proto/flintconv.
package backend
