import type { OpenAPIHono } from '@hono/zod-openapi';
import { type ManualPaymentAction, settleManualPayment } from '@svc/domain';
import { type AppEnv, actorContext, defineRoute, IdParam, json, problem, WRITERS } from '@svc/http';
import { PaymentSchema } from './schemas.ts';

const SUMMARIES: Record<ManualPaymentAction, string> = {
  confirm: 'Confirm a manual payment (the money arrived): the plan is applied to the subscription',
  cancel: 'Cancel a pending manual payment',
  refund: 'Mark a confirmed manual payment refunded: the time it bought is taken back',
};

const routeOf = (action: ManualPaymentAction) =>
  defineRoute({
    method: 'post',
    path: `/payments/{id}/${action}`,
    tags: ['payments'],
    summary: SUMMARIES[action],
    description:
      'Manual providers only: payments of the other kinds are settled by their provider (webhooks, re-reads). Doing it twice answers the payment as it is.',
    auth: { scope: 'admin', roles: WRITERS },
    request: { params: IdParam },
    responses: {
      200: json(PaymentSchema, 'The payment'),
      404: problem('No such payment'),
      409: problem('Not a manual payment, or its status does not allow this'),
    },
  });

export const routes = { confirm: routeOf('confirm'), cancel: routeOf('cancel'), refund: routeOf('refund') };

export const register = (app: OpenAPIHono<AppEnv>) => {
  for (const action of ['confirm', 'cancel', 'refund'] as const) {
    app.openapi(routes[action], async (c) => c.json(await settleManualPayment(actorContext(c), c.req.valid('param').id, action), 200));
  }
};
