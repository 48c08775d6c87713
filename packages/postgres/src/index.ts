/** Public exports. */
export {};
