// iii-directory kit review screens (skeleton).
export const MODULE_API = 1;

export function createKitsReview(deps) {
  const {React} = deps;
  const h = React.createElement;
  function PlanScreen() {
    return h('div', {className: 'iiid-plan'}, 'Kit review');
  }
  return {PlanScreen};
}
