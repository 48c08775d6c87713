/** Public exports of the keys area. Names are listed explicitly. */
export {};
