/** Public exports of the pagination area. Names are listed explicitly. */
export {};
