// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata
// polyfill loaded first. node:crypto can parse certificates but not create them or CSRs;
// node-forge cannot read EC keys; pkijs works but needs every extension built by OID.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

export { x509 };
