/** Public exports of the rate-limit area. Names are listed explicitly. */
export {};
