export const DIFFERENCES = [];
