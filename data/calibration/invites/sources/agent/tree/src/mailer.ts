// Outgoing mail.

import type { Invite } from "./store";

export async function sendInviteEmail(invite: Invite): Promise<void> {
  // The mail provider is not chosen yet.
}
