import type { ProviderPaymentStatus } from '@svc/domain';

/** Crypto Pay invoice statuses -> ours. An invoice cannot be refunded through the API. */
export const CRYPTOBOT_STATUS_TABLE: Readonly<Record<string, ProviderPaymentStatus>> = {
  active: 'pending',
  paid: 'succeeded',
  expired: 'expired',
};

export const cryptobotMapStatus = (state: string): ProviderPaymentStatus | null =>
  Object.hasOwn(CRYPTOBOT_STATUS_TABLE, state) ? (CRYPTOBOT_STATUS_TABLE[state] ?? null) : null;
