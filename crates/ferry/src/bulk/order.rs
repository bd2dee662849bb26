//! Element types and byte order: what a typed array is made of, and the
//! in-place swap between a file's byte order and the machine's.

/// The byte order of the elements in a file or stream.
///
/// Java's `DataInput`/`DataOutput` (and so the paper's files) are
/// big-endian; x86-64 is little-endian.
///
/// ```
/// use ferry::bulk::Endian;
/// assert!(Endian::Native.is_native());
/// assert_eq!(Endian::Little.is_native(), cfg!(target_endian = "little"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Endian {
    /// Least significant byte first.
    Little,
    /// Most significant byte first (network order; Java's).
    Big,
    /// Whatever this machine uses: no swap, ever.
    #[default]
    Native,
}

impl Endian {
    /// True if elements in this order need no swap on this machine.
    pub fn is_native(self) -> bool {
        match self {
            Endian::Native => true,
            Endian::Little => cfg!(target_endian = "little"),
            Endian::Big => cfg!(target_endian = "big"),
        }
    }
}

/// A plain-old-data element of a typed array: any bit pattern is a value
/// ([`bytemuck::Pod`]), and its bytes can be put in the other order.
///
/// Implemented for the integers, `f32`, `f64` and arrays of them. A
/// `#[repr(C)]` record of such fields implements it by swapping each
/// field (the default swaps nothing, which is right only for byte-sized
/// fields):
///
/// ```
/// use ferry::bulk::Element;
/// #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, Debug, PartialEq)]
/// #[repr(C)]
/// struct Point { x: u32, y: u32 }
/// impl Element for Point {
///     fn swap_all(items: &mut [Self]) {
///         // The fields are all u32: swap them as one u32 array.
///         u32::swap_all(bytemuck::cast_slice_mut(items));
///     }
/// }
/// let mut p = [Point { x: 1, y: 0x0102_0304 }];
/// Point::swap_all(&mut p);
/// assert_eq!(p[0], Point { x: 0x0100_0000, y: 0x0403_0201 });
/// ```
pub trait Element: bytemuck::Pod {
    /// Reverses the byte order of every element, in place.
    fn swap_all(items: &mut [Self]) {
        let _ = items;
    }

    /// Puts `items`, in the byte order `from`, into this machine's order
    /// (or the other way: the swap is its own inverse).
    fn to_native(items: &mut [Self], from: Endian) {
        if !from.is_native() {
            Self::swap_all(items);
        }
    }
}

macro_rules! bytes {
    ($($t:ty),*) => {$(
        impl Element for $t {}
    )*};
}
bytes!(u8, i8);

macro_rules! ints {
    ($($t:ty),*) => {$(
        impl Element for $t {
            #[inline]
            fn swap_all(items: &mut [Self]) {
                // A loop the compiler turns into vector byte shuffles.
                for x in items {
                    *x = x.swap_bytes();
                }
            }
        }
    )*};
}
ints!(u16, i16, u32, i32, u64, i64, u128, i128);

impl Element for f32 {
    #[inline]
    fn swap_all(items: &mut [Self]) {
        u32::swap_all(bytemuck::cast_slice_mut(items));
    }
}

impl Element for f64 {
    #[inline]
    fn swap_all(items: &mut [Self]) {
        u64::swap_all(bytemuck::cast_slice_mut(items));
    }
}

impl<T: Element, const N: usize> Element for [T; N]
where
    [T; N]: bytemuck::Pod,
{
    fn swap_all(items: &mut [Self]) {
        T::swap_all(items.as_flattened_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swaps_are_their_own_inverse_and_reverse_bytes() {
        let mut a = [0x0102_0304u32, 0xA0B0_C0D0];
        u32::swap_all(&mut a);
        assert_eq!(a, [0x0403_0201, 0xD0C0_B0A0]);
        u32::swap_all(&mut a);
        assert_eq!(a, [0x0102_0304, 0xA0B0_C0D0]);
        let mut f = [1.5f64];
        let bits = f[0].to_bits();
        f64::swap_all(&mut f);
        assert_eq!(f[0].to_bits(), bits.swap_bytes());
        let mut arr = [[1u16, 2u16]];
        <[u16; 2]>::swap_all(&mut arr);
        assert_eq!(arr, [[0x0100, 0x0200]]);
        let mut b = [1u8, 2];
        u8::swap_all(&mut b);
        assert_eq!(b, [1, 2]);
    }

    #[test]
    fn to_native_swaps_only_foreign_orders() {
        let foreign = if cfg!(target_endian = "little") {
            Endian::Big
        } else {
            Endian::Little
        };
        let mut a = [0x0102u16];
        u16::to_native(&mut a, Endian::Native);
        assert_eq!(a, [0x0102]);
        u16::to_native(&mut a, foreign);
        assert_eq!(a, [0x0201]);
        assert_eq!(u16::from_be_bytes([1, 2]), {
            let mut x = [u16::from_ne_bytes([1, 2])];
            u16::to_native(&mut x, Endian::Big);
            x[0]
        });
    }
}
