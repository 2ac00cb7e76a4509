// The sandbox Worker on a thread that may not block: Atomics.wait throws, as it does where a host forbids it,
// so the Worker must say so at init and take every reply by message.
import "../../lib/sandbox/worker.ts";

Atomics.wait = () => {
  throw new TypeError("Atomics.wait cannot be called in this context");
};
