/**
 * Area `net/`: where remote traffic may go (the endpoint policy) and the one fetch that enforces it.
 * It knows no servers, manifests or tokens; it imports only the top level.
 *
 * The face of the area: the endpoint policy (`endpoint_policy.ts`) and the guarded fetch
 * (`guarded_fetch.ts`).
 *
 * @module
 */
export { checkEndpointUrl, displayUrl, EndpointPolicyError, type Resolver } from "./endpoint_policy.ts";
export { createGuardedFetch, type GuardedFetch } from "./guarded_fetch.ts";
