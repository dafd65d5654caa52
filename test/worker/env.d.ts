// The test environment's bindings are the Worker's (worker/worker-configuration.d.ts).
export {};
