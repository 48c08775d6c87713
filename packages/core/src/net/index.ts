/** Public exports of the network area: client addresses and CIDR blocks. */
export { createClientAddressResolver } from './client-address.ts';
export type { ClientAddressInput, ClientAddressResolver, TrustProxy } from './client-address.ts';
export { ipInCidrs } from './ip-in-cidrs.ts';
