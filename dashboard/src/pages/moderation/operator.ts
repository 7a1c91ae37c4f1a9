// Whether the signed-in person is an operator of this instance: the page shell says so with a meta tag
// (src/modules/dashboard), written per response from ADMIN_EMAILS. The admin API still decides every
// request; this only chooses whether the navigation shows the moderation section.
const operator = document.querySelector('meta[name="operator"]')?.getAttribute('content') === '1'

export function useOperator(): boolean {
  return operator
}
