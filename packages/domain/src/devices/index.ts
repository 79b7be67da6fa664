export * from './device-denials.ts';
export * from './device-headers.ts';
export * from './device-report.ts';
export * from './register-device.ts';
export * from './subscription-devices.ts';
