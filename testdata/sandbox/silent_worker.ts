// A Worker module that ignores every message, to test how SandboxPool reports a sandbox that never starts.
(globalThis as unknown as { onmessage: (() => void) | null }).onmessage = () => {};
