import { echo } from '../../../../echo';

export const dynamic = 'force-dynamic';
export const GET = echo;
export const POST = echo;
