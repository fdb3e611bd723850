// Invites kept in memory, keyed by id.

export interface Invite {
  id: string;
  email: string;
  inviterId: string;
  createdAt: Date;
}

export class Store {
  private invites = new Map<string, Invite>();
  private next = 1;

  insert(fields: Omit<Invite, "id">): Invite {
    const invite = { id: `inv_${this.next++}`, ...fields };
    this.invites.set(invite.id, invite);
    return invite;
  }

  find(id: string): Invite | undefined {
    return this.invites.get(id);
  }
}
