/** swagger-ui-dist ships no types; its absolute-path.js answers the directory of its files. */
declare module 'swagger-ui-dist/absolute-path.js' {
  const getAbsoluteFSPath: () => string;
  export default getAbsoluteFSPath;
}
