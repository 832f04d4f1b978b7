// The extension's icon sizes and file names: what the Chrome Web Store asks for (16 for the favicon and context
// menus, 32 on Windows, 48 on the extensions page, 128 for the store and the install dialog). The renderer writes
// these files, the manifest names them, and the package test checks each one; none of them decides the others.
export const ICON_SIZES = [16, 32, 48, 128] as const

export const iconFile = (size: number): string => `icons/icon-${size}.png`
