// Creating invites and announcing them.

import type { Bus } from "./bus";
import { sendInviteEmail } from "./mailer";
import type { Invite, Store } from "./store";

const DAY_MS = 24 * 60 * 60 * 1000;

export function computeExpiry(createdAt: Date): Date {
  return new Date(createdAt.getTime() + 7 * DAY_MS);
}

export async function createInvite(
  store: Store,
  bus: Bus,
  email: string,
  inviterId: string,
  now: Date,
): Promise<Invite> {
  const invite = store.insert({ email, inviterId, createdAt: now });
  const payload = { inviteId: invite.id, email: invite.email };
  bus.publish("invite_created", payload);
  await sendInviteEmail(invite);
  return invite;
}
