import { spendRequest, usageRequest } from '../../../src/cli/admin-spend';

describe('sluice spend and usage export: the admin request', () => {
  it('passes --user (and --team) as query parameters, escaped', () => {
    expect(spendRequest(['--user', 'u-42', '--from', '2026-03-01'])).toEqual({ method: 'GET', path: '/admin/spend?user=u-42&from=2026-03-01' });
    expect(spendRequest(['--user', 'a@b.example/x'])).toEqual({ method: 'GET', path: '/admin/spend?user=a%40b.example%2Fx' });
    expect(usageRequest(['--since', '2026-03-01', '--team', 'search', '--user', 'u-42'])).toEqual({ method: 'GET', path: '/admin/usage?since=2026-03-01&team=search&user=u-42' });
  });
});
