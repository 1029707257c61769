/*-------------------------------------------------------------------------
 *
 * numeric_fixed.c
 *	  numeric(p, s) values as fixed-point integers, and sums of them back.
 *
 * sum and avg over a numeric(p, s) column with p <= 18 run on the engine's
 * decimal kernels (wa_agg.h): every value of such a column has exactly s
 * digits after the point (the typmod rounds it so on the way in) and fewer
 * than 18 in all, so value * 10^s is an int64, and a window's sum of them
 * an exact int128, which then becomes the numeric PostgreSQL's own sum
 * would give: the same digits, with s of them after the point.
 *
 * The batch functions read a numeric without such a typmod the same way,
 * at the display scale of its first value, as long as every value has it
 * and at most 18 digits (money in an untyped column, say, all with two
 * digits after the point); the first that does not stops the call, which
 * starts again with the aggregate on the generic path (commands/batch.c).
 * PostgreSQL's sum of values of one display scale has that scale too.
 *
 * Reading a numeric through numeric's functions (a multiplication and a
 * cast) costs more than the rest of an event's work, so the value is read
 * from its stored form, documented at the top of PostgreSQL's numeric.c
 * and fixed since on-disk compatibility depends on it: a 16-bit header
 * (sign, display scale and, in the short form, the weight), in the long
 * form a 16-bit weight, then base-10000 digits, the first one worth
 * 10000^weight.
 *
 * src/query/numeric_fixed.c
 *
 *-------------------------------------------------------------------------
 */
#include "query/query.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/numeric.h"

/* The stored form (numeric.c's NUMERIC_* macros) */
#define FORM_MASK			0xC000
#define FORM_NEGATIVE		0x4000
#define FORM_SHORT			0x8000
#define FORM_SPECIAL		0xC000
#define SPECIAL_MASK		0xF000
#define SPECIAL_NAN			0xC000
#define SHORT_SIGN			0x2000
#define SHORT_DSCALE_MASK	0x1F80
#define SHORT_DSCALE_SHIFT	7
#define SHORT_WEIGHT_SIGN	0x0040
#define SHORT_WEIGHT_MASK	0x003F
#define LONG_DSCALE_MASK	0x3FFF
#define DIGIT_BASE			10000
#define DIGIT_DECIMALS		4

/* The largest fixed-point magnitude: 18 decimal digits. */
#define FIXED_LIMIT ((int64) 999999999999999999)

static const int64 powers_of_ten[] = {
	1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
	1000000000, 10000000000, 100000000000, 1000000000000,
	10000000000000, 100000000000000, 1000000000000000,
	10000000000000000, 100000000000000000, 1000000000000000000
};

/*
 * The scale s of a numeric(p, s) typmod whose values the decimal kernels
 * can hold (0 <= s <= p <= 18), or -1.
 */
int
wa_fixed_point_scale(int32 typmod)
{
	int32		precision;
	int32		scale;

	if (typmod < (int32) VARHDRSZ)
		return -1;				/* unconstrained numeric */
	precision = ((typmod - VARHDRSZ) >> 16) & 0xFFFF;
	/* from PostgreSQL 15 on the scale is 11 bits, signed */
	scale = (((typmod - VARHDRSZ) & 0x7FF) ^ 1024) - 1024;
	if (precision > 18 || scale < 0 || scale > precision)
		return -1;
	return scale;
}

static void
not_fixed_point(int scale)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_EXCEPTION),
			 errmsg("numeric value does not have the form numeric(18, %d) promises", scale),
			 errdetail("windowagg sums such values as integers of units of 10^-%d.", scale)));
}

/*
 * Read d as value * 10^*scale into out->i, or a NaN as f NaN (wa_value's
 * convention for the decimal kernels); false if it is not a number of
 * *scale digits after the point and at most 18 digits in all (an
 * infinity neither).  *scale WA_SCALE_UNKNOWN takes the value's own
 * display scale, if it is at most 18 (a NaN leaves it unknown).
 */
static bool
read_fixed(Datum d, int *scale, wa_value *out)
{
	struct varlena *v = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(d));
	const char *data = VARDATA_ANY(v);
	Size		len = VARSIZE_ANY_EXHDR(v);
	uint16		header;
	int			weight;
	int			dscale;
	bool		negative;
	Size		first_digit;
	int			n_digits;
	wa_int128	value = 0;
	bool		fits = false;

	out->f = 0.0;
	out->i = 0;
	if (len < sizeof(uint16))
		goto done;
	memcpy(&header, data, sizeof(header));
	if ((header & FORM_MASK) == FORM_SPECIAL)
	{
		/* numeric(p, s) admits NaN, but not the infinities */
		if ((header & SPECIAL_MASK) == SPECIAL_NAN)
		{
			out->f = get_float8_nan();
			fits = true;
		}
		goto done;
	}
	if ((header & FORM_MASK) == FORM_SHORT)
	{
		negative = (header & SHORT_SIGN) != 0;
		dscale = (header & SHORT_DSCALE_MASK) >> SHORT_DSCALE_SHIFT;
		weight = header & SHORT_WEIGHT_MASK;
		if (header & SHORT_WEIGHT_SIGN)
			weight |= ~SHORT_WEIGHT_MASK;
		first_digit = sizeof(uint16);
	}
	else
	{
		int16		w;

		if (len < sizeof(uint16) + sizeof(int16))
			goto done;
		negative = (header & FORM_MASK) == FORM_NEGATIVE;
		dscale = header & LONG_DSCALE_MASK;
		memcpy(&w, data + sizeof(uint16), sizeof(w));
		weight = w;
		first_digit = sizeof(uint16) + sizeof(int16);
	}
	if (*scale == WA_SCALE_UNKNOWN && dscale <= 18)
		*scale = dscale;
	if (dscale != *scale)
		goto done;
	n_digits = (int) ((len - first_digit) / sizeof(int16));
	for (int i = 0; i < n_digits; i++)
	{
		int16		digit;
		int			exponent = DIGIT_DECIMALS * (weight - i) + *scale;

		memcpy(&digit, data + first_digit + i * sizeof(int16), sizeof(digit));
		if (digit < 0 || digit >= DIGIT_BASE)
			goto done;
		if (digit == 0)
			continue;
		if (exponent > 18)
			goto done;
		if (exponent >= 0)
			value += (wa_int128) digit * powers_of_ten[exponent];
		else
		{
			/* digits past the scale: only zeros (dscale = scale says so) */
			if (exponent <= -DIGIT_DECIMALS ||
				digit % powers_of_ten[-exponent] != 0)
				goto done;
			value += digit / powers_of_ten[-exponent];
		}
		if (value > FIXED_LIMIT)
			goto done;
	}
	out->i = (int64) (negative ? -value : value);
	fits = true;
done:
	if ((Pointer) v != DatumGetPointer(d))
		pfree(v);
	return fits;
}

/*
 * A numeric(p, s) value as value * 10^scale in out->i, or a NaN as f NaN;
 * an error for anything else, which such a column cannot hold.
 */
void
wa_numeric_to_fixed(Datum d, int scale, wa_value *out)
{
	if (!read_fixed(d, &scale, out))
		not_fixed_point(scale);
}

/*
 * A value of a numeric of any typmod, read as fixed point at *scale, the
 * display scale of the first value read (*scale is WA_SCALE_UNKNOWN until
 * then): false if it has another scale, or more than 18 digits, or is
 * infinite, and the caller must then compute the aggregate another way.
 */
bool
wa_numeric_guess_fixed(Datum d, int *scale, wa_value *out)
{
	return read_fixed(d, scale, out);
}

/*
 * An exact sum of fixed-point values as a numeric with scale digits after
 * the point, as PostgreSQL's sum over them shows it.
 */
Datum
wa_fixed_to_numeric(wa_int128 value, int scale)
{
	char		buf[64];
	char	   *p = buf + sizeof(buf) - 1;
	bool		negative = value < 0;
	unsigned __int128 mag;
	int			n = 0;

	mag = negative ? (unsigned __int128) 0 - (unsigned __int128) value :
		(unsigned __int128) value;
	*p = '\0';
	/* the digits, with the point scale of them from the right */
	do
	{
		if (n == scale && scale > 0)
			*--p = '.';
		*--p = (char) ('0' + (int) (mag % 10));
		mag /= 10;
		n++;
	} while (mag != 0 || n <= scale);
	if (negative)
		*--p = '-';
	return DirectFunctionCall3(numeric_in, CStringGetDatum(p),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}
