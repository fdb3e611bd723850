// Email address checks.

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

export function isValidEmail(value: unknown): value is string {
  return typeof value === "string" && EMAIL.test(value);
}
